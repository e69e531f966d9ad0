//! OAuth 2.0 client credentials, refresh and revocation (RFC 6749, RFC 7009) and the
//! bearer check every request goes through.

pub mod kek;
pub mod keys;
pub mod revocation;
pub mod rotation;
pub mod secrets;
pub mod signing;
pub mod tokens;
mod verified;

pub use kek::KeyEncryptionKey;
pub use keys::KeySet;
pub use revocation::RevocationCache;
pub use rotation::KeyPolicy;
pub use signing::{KeyInfo, Rotation, SigningKeys};
pub use tokens::{
    BearerError, ClientCredentials, IssuedTokens, OAuthError, TokenConfig, TokenPorts, TokenService,
};
