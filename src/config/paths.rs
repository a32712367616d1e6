//! Where linkdeck keeps its files, from the platform's conventions (XDG on Linux).

use std::path::{Path, PathBuf};

use directories::{BaseDirs, ProjectDirs};

/// The standard locations; each can be overridden (`--config`, `--db`, a profile's `db`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$XDG_CONFIG_HOME/linkdeck/config.toml`.
    pub config_file: PathBuf,
    /// `$XDG_DATA_HOME/linkdeck`.
    pub data_dir: PathBuf,
    /// `$XDG_STATE_HOME/linkdeck`, or the data directory where the platform has no state dir.
    pub state_dir: PathBuf,
    home: Option<PathBuf>,
}

impl Paths {
    /// The platform's locations. Without a home directory (a bare container) everything falls
    /// back to `./.linkdeck`, so the program still runs.
    pub fn discover() -> Paths {
        let home = BaseDirs::new().map(|b| b.home_dir().to_owned());
        match ProjectDirs::from("", "", "linkdeck") {
            Some(dirs) => Paths {
                config_file: dirs.config_dir().join("config.toml"),
                data_dir: dirs.data_dir().to_owned(),
                state_dir: dirs
                    .state_dir()
                    .unwrap_or_else(|| dirs.data_dir())
                    .to_owned(),
                home,
            },
            None => {
                let base = PathBuf::from(".linkdeck");
                Paths {
                    config_file: base.join("config.toml"),
                    data_dir: base.clone(),
                    state_dir: base,
                    home,
                }
            }
        }
    }

    /// Explicit locations (tests, or an embedding program), without `~` expansion.
    pub fn new(config_file: PathBuf, data_dir: PathBuf, state_dir: PathBuf) -> Paths {
        Paths {
            config_file,
            data_dir,
            state_dir,
            home: None,
        }
    }

    /// The database of profiles that name none.
    pub fn default_db(&self) -> PathBuf {
        self.data_dir.join("linkdeck.db")
    }

    /// Where log files go.
    pub fn log_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Expands a leading `~/` and reads a relative path from `base` (the config file's directory),
    /// so a profile's `db = "links.db"` means the same file whatever the working directory.
    pub fn resolve(&self, raw: &Path, base: &Path) -> PathBuf {
        let expanded = match (raw.strip_prefix("~"), &self.home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ => raw.to_owned(),
        };
        if expanded.is_absolute() {
            expanded
        } else {
            base.join(expanded)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> Paths {
        Paths {
            config_file: "/c/linkdeck/config.toml".into(),
            data_dir: "/d/linkdeck".into(),
            state_dir: "/s/linkdeck".into(),
            home: Some("/home/me".into()),
        }
    }

    #[test]
    fn relative_paths_are_read_from_the_config_directory() {
        let p = paths();
        let base = Path::new("/c/linkdeck");
        assert_eq!(
            p.resolve(Path::new("x.db"), base),
            Path::new("/c/linkdeck/x.db")
        );
        assert_eq!(p.resolve(Path::new("/abs.db"), base), Path::new("/abs.db"));
        assert_eq!(
            p.resolve(Path::new("~/l/x.db"), base),
            Path::new("/home/me/l/x.db")
        );
        assert_eq!(p.default_db(), Path::new("/d/linkdeck/linkdeck.db"));
    }
}
