use std::fmt;

/// The platforms a platform-targeting rule can name, in the order people pick them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    Ios,
    Android,
    Windows,
    OsX,
    Linux,
    Ubuntu,
    ChromeOs,
    HarmonyOs,
    Huawei,
}

impl Platform {
    pub const ALL: [Platform; 9] = [
        Platform::Ios,
        Platform::Android,
        Platform::Windows,
        Platform::OsX,
        Platform::Linux,
        Platform::Ubuntu,
        Platform::ChromeOs,
        Platform::HarmonyOs,
        Platform::Huawei,
    ];

    /// The canonical name, as stored and sent on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Ios => "iOS",
            Platform::Android => "Android",
            Platform::Windows => "Windows",
            Platform::OsX => "OS X",
            Platform::Linux => "Linux",
            Platform::Ubuntu => "Ubuntu",
            Platform::ChromeOs => "Chrome OS",
            Platform::HarmonyOs => "HarmonyOS",
            Platform::Huawei => "Huawei",
        }
    }

    /// Matches a name case-insensitively against the canonical names.
    pub fn parse(name: &str) -> Option<Platform> {
        let name = name.trim();
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
