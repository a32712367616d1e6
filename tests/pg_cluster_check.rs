//! The PostgreSQL test harness itself (`tests/pg_cluster`): a fresh database takes the password
//! over 127.0.0.1 and nothing else, has pg_trgm, and is no other test's.
//!
//! Without PostgreSQL these tests say why and pass; with `LINKDECK_REQUIRE_POSTGRES=1` they fail.

mod pg_cluster;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, NoTls};

use pg_cluster::PASSWORD;

/// A connection to `url` with `password` (if any), its connection driven in the background.
async fn connect(url: &str, password: Option<&str>) -> Result<Client, tokio_postgres::Error> {
    let mut config: Config = url.parse().expect("the harness gives a valid URL");
    if let Some(password) = password {
        config.password(password);
    }
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

#[tokio::test]
async fn a_fresh_database_takes_the_password_over_loopback() {
    let Some(pg) = pg_cluster::cluster() else {
        return;
    };
    let url = pg.fresh_database();
    let config: Config = url.parse().unwrap();
    assert_eq!(config.get_password(), None, "{url} carries no password");
    assert_eq!(
        pg_cluster::password_env(),
        [("LINKDECK_DB_PASSWORD", PASSWORD)]
    );

    let client = connect(&url, Some(PASSWORD)).await.unwrap();
    let row = client
        .query_one(
            "SELECT current_database(), current_user, host(inet_server_addr())",
            &[],
        )
        .await
        .unwrap();
    let (db, user, addr): (String, String, String) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(url, pg.url_of(&db));
    assert_eq!(user, pg_cluster::USER);
    assert_eq!(addr, "127.0.0.1");
}

#[tokio::test]
async fn a_wrong_or_missing_password_is_refused() {
    let Some(pg) = pg_cluster::cluster() else {
        return;
    };
    let url = pg.fresh_database();
    let wrong = connect(&url, Some("not-the-password")).await.err();
    assert_eq!(
        wrong.as_ref().and_then(|e| e.code()),
        Some(&SqlState::INVALID_PASSWORD),
        "a wrong password is refused by the server: {wrong:?}"
    );
    // scram-sha-256 asks for a password; trust would have let this in.
    let missing = connect(&url, None).await.err();
    assert!(
        missing
            .as_ref()
            .and_then(std::error::Error::source)
            .is_some_and(|cause| cause.to_string() == "password missing"),
        "no password, no connection: {missing:?}"
    );
}

#[tokio::test]
async fn every_fresh_database_has_pg_trgm() {
    let Some(pg) = pg_cluster::cluster() else {
        return;
    };
    let client = connect(&pg.fresh_database(), Some(PASSWORD)).await.unwrap();
    let row = client
        .query_one(
            "SELECT similarity($1, $2), similarity($3, $4)",
            &[&"abc", &"abd", &"привет", &"привед"],
        )
        .await
        .unwrap();
    let (ascii, cyrillic): (f32, f32) = (row.get(0), row.get(1));
    assert!(
        ascii > 0.0 && ascii < 1.0,
        "similarity('abc', 'abd') = {ascii}"
    );
    // Letters beyond ASCII make trigrams too, unless the system lacks C.UTF-8 and the cluster
    // had to settle for plain C.
    let ctype: String = client.query_one("SHOW lc_ctype", &[]).await.unwrap().get(0);
    if ctype != "C" {
        assert!(
            cyrillic > 0.0 && cyrillic < 1.0,
            "similarity of Cyrillic words = {cyrillic}"
        );
    }
}

#[tokio::test]
async fn two_fresh_databases_are_distinct() {
    let Some(pg) = pg_cluster::cluster() else {
        return;
    };
    let (first, second) = (pg.fresh_database(), pg.fresh_database());
    assert_ne!(first, second);
    let a = connect(&first, Some(PASSWORD)).await.unwrap();
    let b = connect(&second, Some(PASSWORD)).await.unwrap();
    a.batch_execute("CREATE TABLE only_here (n int)")
        .await
        .unwrap();
    let here = "SELECT count(*) FROM pg_tables WHERE tablename = $1";
    let count = |client: Client| async move {
        let n: i64 = client
            .query_one(here, &[&"only_here"])
            .await
            .unwrap()
            .get(0);
        n
    };
    assert_eq!(count(a).await, 1);
    assert_eq!(
        count(b).await,
        0,
        "a table made in {first} is not in {second}"
    );
}
