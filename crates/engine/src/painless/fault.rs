//! What stops a script: an exception a `try` may catch, as Java throws it (its class, so
//! `catch (IllegalArgumentException e)` catches what Java's would and no more), or a halt
//! no script can catch: a bound the engine sets (steps, sizes, depth), as Painless's own
//! loop counter is an `Error`, not an `Exception`.

#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    Thrown { class: String, message: String },
    Halt(String),
}

/// Java's exception classes a script meets, each with its parent.
const HIERARCHY: [(&str, &str); 14] = [
    ("Exception", "Throwable"),
    ("RuntimeException", "Exception"),
    ("IllegalArgumentException", "RuntimeException"),
    ("NumberFormatException", "IllegalArgumentException"),
    ("IllegalStateException", "RuntimeException"),
    ("NullPointerException", "RuntimeException"),
    ("ClassCastException", "RuntimeException"),
    ("ArithmeticException", "RuntimeException"),
    ("IndexOutOfBoundsException", "RuntimeException"),
    (
        "ArrayIndexOutOfBoundsException",
        "IndexOutOfBoundsException",
    ),
    (
        "StringIndexOutOfBoundsException",
        "IndexOutOfBoundsException",
    ),
    ("UnsupportedOperationException", "RuntimeException"),
    ("NoSuchElementException", "RuntimeException"),
    ("DateTimeParseException", "RuntimeException"),
];

/// Whether a script may name `class` (in `catch`, `throw new`).
pub fn is_exception_class(class: &str) -> bool {
    class == "Throwable" || HIERARCHY.iter().any(|(c, _)| *c == class)
}

impl Fault {
    pub fn thrown(class: &str, message: impl Into<String>) -> Fault {
        Fault::Thrown {
            class: class.to_string(),
            message: message.into(),
        }
    }
    pub fn arg(message: impl Into<String>) -> Fault {
        Fault::thrown("IllegalArgumentException", message)
    }
    pub fn npe(message: impl Into<String>) -> Fault {
        Fault::thrown("NullPointerException", message)
    }
    pub fn cast(message: impl Into<String>) -> Fault {
        Fault::thrown("ClassCastException", message)
    }
    pub fn index(message: impl Into<String>) -> Fault {
        Fault::thrown("IndexOutOfBoundsException", message)
    }
    pub fn number(message: impl Into<String>) -> Fault {
        Fault::thrown("NumberFormatException", message)
    }
    pub fn halt(message: impl Into<String>) -> Fault {
        Fault::Halt(message.into())
    }

    /// Whether `catch (class e)` takes this fault.
    pub fn caught_by(&self, class: &str) -> bool {
        let Fault::Thrown { class: mut at, .. } = self.clone() else {
            return false;
        };
        loop {
            if at == class {
                return true;
            }
            match HIERARCHY.iter().find(|(c, _)| *c == at) {
                Some((_, parent)) => at = parent.to_string(),
                None => return class == "Exception" || class == "Throwable",
            }
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Fault::Thrown { message, .. } | Fault::Halt(message) => message,
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Thrown { class, message } => write!(f, "{class}: {message}"),
            Fault::Halt(message) => f.write_str(message),
        }
    }
}

/// The engine's own errors in the subset (a construct or method it does not run) stop the
/// script: a `catch` must not turn what the engine cannot do into a different answer.
impl From<String> for Fault {
    fn from(message: String) -> Fault {
        Fault::Halt(message)
    }
}

impl From<&str> for Fault {
    fn from(message: &str) -> Fault {
        Fault::Halt(message.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_follow_java_classes() {
        let nfe = Fault::number("For input string: \"x\"");
        assert!(nfe.caught_by("NumberFormatException"));
        assert!(nfe.caught_by("IllegalArgumentException"));
        assert!(nfe.caught_by("Exception"));
        assert!(!nfe.caught_by("NullPointerException"));
        assert!(!Fault::halt("steps").caught_by("Exception"));
        assert!(!Fault::halt("steps").caught_by("Throwable"));
        assert!(Fault::npe("x").caught_by("RuntimeException"));
    }
}
