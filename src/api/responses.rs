//! The shared responses by name, for `#[utoipa::path(responses((status = 409, response =
//! Conflict)))]`; what each says is written in `openapi::document::responses`.

macro_rules! named {
    ($($name:ident),* $(,)?) => { $(
        pub struct $name;
        impl<'r> utoipa::ToResponse<'r> for $name {
            fn response() -> (
                &'r str,
                utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
            ) {
                (stringify!($name), utoipa::openapi::response::Response::new("").into())
            }
        }
    )* };
}
named!(
    HtmlPage,
    PageProblem,
    BusyPage,
    Forbidden,
    NotFound,
    NotAcceptable,
    Conflict,
    EventsGone,
    Unprocessable,
    Busy,
    Unavailable,
    BadSignature,
);

/// Bytes as they are (a PNG picture, a raw mail), described as binary text.
pub struct Bytes;

impl utoipa::PartialSchema for Bytes {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl utoipa::ToSchema for Bytes {}
