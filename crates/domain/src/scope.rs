//! OAuth scopes and the rules for combining them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A scope a token can hold: `admin` and `staff`, and `citizen` for the citizen portal
/// clients (docs/api.md "Clients, principals and scopes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Admin,
    Staff,
    Citizen,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Admin, Scope::Staff, Scope::Citizen];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Admin => "admin",
            Scope::Staff => "staff",
            Scope::Citizen => "citizen",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Scope::Admin => 1,
            Scope::Staff => 2,
            Scope::Citizen => 4,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope `{0}`")]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "admin" => Ok(Scope::Admin),
            "staff" => Ok(Scope::Staff),
            "citizen" => Ok(Scope::Citizen),
            other => Err(UnknownScope(other.to_owned())),
        }
    }
}

/// A set of scopes, rendered as the space-separated list OAuth uses (RFC 6749 §3.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ScopeSet(u8);

impl ScopeSet {
    pub const fn empty() -> Self {
        ScopeSet(0)
    }

    pub fn only(scope: Scope) -> Self {
        ScopeSet(scope.bit())
    }

    pub fn with(self, scope: Scope) -> Self {
        ScopeSet(self.0 | scope.bit())
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn is_subset_of(self, other: ScopeSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// True when the set holds at least one of `wanted`.
    pub fn intersects(self, wanted: &[Scope]) -> bool {
        wanted.iter().any(|s| self.contains(*s))
    }

    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// Parses a space-separated scope list; empty input is the empty set.
    pub fn parse(list: &str) -> Result<Self, UnknownScope> {
        list.split(' ')
            .filter(|s| !s.is_empty())
            .try_fold(ScopeSet::empty(), |set, s| Ok(set.with(s.parse()?)))
    }

    // `principal_kind`, the principal a set acts for, is in `principal.rs`.
}

impl FromIterator<Scope> for ScopeSet {
    fn from_iter<T: IntoIterator<Item = Scope>>(iter: T) -> Self {
        iter.into_iter().fold(ScopeSet::empty(), ScopeSet::with)
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for scope in self.iter() {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(scope.as_str())?;
            first = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PrincipalKind;

    #[test]
    fn parses_and_renders_space_separated_lists() {
        let set = ScopeSet::parse("staff  admin").unwrap();
        assert_eq!(set.to_string(), "admin staff");
        assert!(ScopeSet::parse("admin root").is_err());
        assert!(ScopeSet::parse("").unwrap().is_empty());
    }

    #[test]
    fn subset_and_intersection() {
        let admin_staff = ScopeSet::only(Scope::Admin).with(Scope::Staff);
        assert!(ScopeSet::only(Scope::Staff).is_subset_of(admin_staff));
        assert!(!ScopeSet::only(Scope::Citizen).is_subset_of(admin_staff));
        assert!(admin_staff.intersects(&[Scope::Citizen, Scope::Staff]));
        assert!(!admin_staff.intersects(&[Scope::Citizen]));
    }

    #[test]
    fn principal_kind_follows_the_strongest_scope() {
        let cases = [
            ("admin", Some(PrincipalKind::Admin)),
            ("admin staff", Some(PrincipalKind::Admin)),
            ("staff", Some(PrincipalKind::Staff)),
            ("citizen", Some(PrincipalKind::Citizen)),
            ("citizen staff", None),
            ("", None),
        ];
        for (list, kind) in cases {
            assert_eq!(ScopeSet::parse(list).unwrap().principal_kind(), kind, "{list}");
        }
    }
}
