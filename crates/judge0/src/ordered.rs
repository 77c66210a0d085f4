//! JSON objects written with their keys in a chosen order (Judge0 writes a serializer's
//! attribute order; `serde_json::Value` would sort them).

use serde::Serialize;

/// An object of keys and already-serialised values, in insertion order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Object {
    fields: Vec<(String, String)>,
}

impl Object {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.push(key, value);
        self
    }

    pub fn push(&mut self, key: &str, value: impl Serialize) {
        let text = serde_json::to_string(&value).expect("JSON values serialise");
        self.fields.push((key.to_string(), text));
    }

    /// A value that is already JSON text (a nested ordered object).
    pub fn push_raw(&mut self, key: &str, json: String) {
        self.fields.push((key.to_string(), json));
    }

    pub fn render(&self) -> String {
        let mut out = String::from("{");
        for (i, (key, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).expect("strings serialise"));
            out.push(':');
            out.push_str(value);
        }
        out.push('}');
        out
    }
}

/// A JSON array of already-serialised items.
pub fn array(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("[{}]", items.join(","))
}

/// An object built from pairs, in their order.
pub fn object<V: Serialize>(pairs: impl IntoIterator<Item = (&'static str, V)>) -> Object {
    let mut object = Object::new();
    for (key, value) in pairs {
        object.push(key, value);
    }
    object
}
