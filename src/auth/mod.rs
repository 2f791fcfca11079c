//! Credentials and their checks: passwords, login tokens, personal access tokens and their
//! scopes, the signed links in mails, and who a caller is. Nothing here knows of HTTP.

pub mod caller;
pub mod hasher;
pub mod links;
pub mod login_token;
pub mod password;
pub mod personal_token;
pub mod reply_address;
pub mod scopes;
pub mod secrets;

pub use caller::{
    AuthUser, Caller, Credential, INVALID_CREDENTIALS, INVALID_TOKEN, LoginSession, TOKEN_REQUIRED,
};
pub use login_token::{Claims, IssuedToken, TokenKeys};
pub use password::{HashMemory, hash_password, verify_password};
pub use secrets::{Secret, Secrets};
