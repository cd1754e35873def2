//! What a corpus reader writes around each document: nothing (bare documents), or the
//! action line a bulk request body needs before it.

/// How a document goes into a bulk body after its action line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentAs {
    /// As it is (`index` and `create` actions).
    Source,
    /// As a partial update: `{"doc":<document>}`.
    PartialUpdate,
}

/// Writes the action line before each document of a bulk body: Elasticsearch's
/// `{"index":{}}`, or one with an id (Rally's id conflicts).
pub trait ActionLines: Send {
    fn write_action(&mut self, buf: &mut String) -> DocumentAs;

    /// The line every document gets, when it is always the same: then documents are read
    /// straight into the body after it, with no copy.
    fn constant(&self) -> Option<&'static str> {
        None
    }
}

/// What a reader hands out: bare documents, or a bulk body with an action line before each.
pub enum Framing {
    /// One document a line (counting, checking).
    Documents,
    /// Action line, document line, ...; files with their own action lines keep them.
    Bulk(Box<dyn ActionLines>),
}
