//! `text_enum!`: a closed set of values stored and sent as text (database columns, JSON,
//! outbox event kinds), written once for every such enum of the domain.

/// The enum with its serde form (each variant as its text), `ALL`, `as_str`, `Display`
/// and `FromStr` (which names `$what` when it refuses).
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident ($what:literal) { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| format!("unknown {} `{s}`", $what))
            }
        }
    };
}

pub(crate) use text_enum;
