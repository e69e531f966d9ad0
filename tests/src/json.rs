//! Request bodies made from others.

use serde_json::Value;

/// `base` with the members of `overrides` set (or removed when `null`).
pub fn merge(mut base: Value, overrides: Value) -> Value {
    if let (Some(base), Value::Object(overrides)) = (base.as_object_mut(), overrides) {
        for (key, value) in overrides {
            if value.is_null() {
                base.remove(&key);
            } else {
                base.insert(key, value);
            }
        }
    }
    base
}
