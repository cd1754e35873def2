//! `POST /_query`: an ES|QL request run by `crate::esql`, answered as JSON.

use crate::cluster::Engine;
use crate::rest::params::param;
use crate::rest::{parse_body, RestResponse};

impl Engine {
    pub(crate) fn esql(&self, query: &str, body: &[u8]) -> RestResponse {
        if let Some(format) = param(query, "format").filter(|f| f != "json") {
            return RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("ES|QL `format={format}` is not run by the embedded engine (json)"),
            );
        }
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        match crate::esql::run(self, &body) {
            Ok(answer) => RestResponse::json(200, &answer),
            Err(e) if e.kind == crate::error::ErrorKind::BadRequest => {
                RestResponse::error(400, "verification_exception", &e.message)
            }
            Err(e) => RestResponse::from_error(&e),
        }
    }
}
