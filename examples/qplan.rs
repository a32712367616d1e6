// Throwaway: query plans and timings with the bundled SQLite. Not committed.
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let conn = rusqlite::Connection::open(&args[1]).unwrap();
    if let Ok(p) = std::env::var("PRAGMAS") {
        conn.execute_batch(&p).unwrap();
    }
    for sql in std::io::stdin()
        .lines()
        .map(|l| l.unwrap())
        .filter(|l| !l.trim().is_empty())
    {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let mut best = f64::MAX;
        let mut rows = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let mut stmt = conn.prepare(&sql).unwrap();
            let mut r = stmt.query([]).unwrap();
            rows = 0;
            let mut first = None;
            while let Some(row) = r.next().unwrap() {
                rows += 1;
                if first.is_none() {
                    first = row.get::<_, i64>(0).ok();
                }
            }
            let _ = first;
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{:8.2} ms rows={rows} | {} | {}",
            best * 1e3,
            plan.join(" / "),
            &sql[..sql.len().min(110)]
        );
    }
}
