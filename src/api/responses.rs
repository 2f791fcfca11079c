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
);
