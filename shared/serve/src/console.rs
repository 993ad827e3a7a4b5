//! The console: `GET /` on every host answers one static page (`console.html`, no build step,
//! no framework) that shows a person what an agent gets — a bundle exactly as `/api/bundle`
//! returns it (sections, heading paths, `slug @ version` citations, the coverage block with its
//! confidence), a briefing preview (rendered markdown, its token count and budget) and the
//! index's health (build, counts, warnings, clusters and hubs).
//!
//! The page holds no wiki content: everything it shows it fetches from the REST routes with
//! the API key typed into it (sent as `Authorization: Bearer …`), so it sees exactly what that
//! principal may see, and nothing restricted is in the page itself.

use wikantik_http::Response;

/// The page, as served.
pub const CONSOLE_HTML: &str = include_str!("console.html");

/// `GET /`.
pub fn page() -> Response {
    Response::text(200, "text/html; charset=UTF-8", CONSOLE_HTML.to_string())
        .with_header("content-security-policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
        .with_header("x-content-type-options", "nosniff")
}
