//! Integers in requests. JSON has one number type, and JSON Schema's `integer` is any number
//! with no fraction, so a client (or its JSON library) may well send `3.0` or `3e0` for 3; the
//! server accepts what the schema accepts. A number with a fraction is refused with a
//! `validation-failed` problem naming the field, not with the 400 of an unreadable body, so
//! [`Integer`] reads any number and the handler asks for the whole value with its field's name.

use std::fmt;
use std::ops::RangeInclusive;

use serde::de::{self, Deserializer, Visitor};
use serde_json::{Number, Value};

use crate::http::problem::ApiError;

/// Beyond this an integral `f64` is not converted: it is out of every range the API has, and
/// saturating keeps the caller's range check (and its message) in charge.
const LARGEST: f64 = 1e36;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Read {
    Whole(i128),
    Fraction(f64),
}

impl Read {
    fn of_f64(value: f64) -> Read {
        if value.fract() != 0.0 {
            Read::Fraction(value)
        } else if value.abs() < LARGEST {
            Read::Whole(value as i128)
        } else if value > 0.0 {
            Read::Whole(i128::MAX)
        } else {
            Read::Whole(i128::MIN)
        }
    }
}

/// An integer field of a JSON body: any JSON number, read as its value. A string is refused as
/// before, as a body that does not fit the endpoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Integer(Read);

/// An integer in a query string or a path, written as a JSON number would be (`2`, `2.0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryInteger(pub Integer);

impl Integer {
    /// The value; refused when it has a fraction. Values too large for any field saturate.
    pub fn whole(self, field: &'static str) -> Result<i128, ApiError> {
        match self.0 {
            Read::Whole(value) => Ok(value),
            Read::Fraction(value) => Err(ApiError::validation(
                field,
                format!("{field} must be a whole number, not {value}"),
            )),
        }
    }

    /// The value as a `T`; refused when it has a fraction or does not fit.
    pub fn get<T: TryFrom<i128>>(self, field: &'static str) -> Result<T, ApiError> {
        let value = self.whole(field)?;
        T::try_from(value)
            .map_err(|_| ApiError::validation(field, format!("{field} is out of range: {value}")))
    }

    /// The value, checked against `range`; `message` says what the field takes.
    pub fn within(
        self,
        field: &'static str,
        range: RangeInclusive<i64>,
        message: impl FnOnce() -> String,
    ) -> Result<i64, ApiError> {
        let value = self.whole(field)?;
        i64::try_from(value)
            .ok()
            .filter(|value| range.contains(value))
            .ok_or_else(|| ApiError::validation(field, message()))
    }
}

impl QueryInteger {
    pub fn whole(self, field: &'static str) -> Result<i128, ApiError> {
        self.0.whole(field)
    }
}

/// Reads integer text as a JSON number would be read: `2`, `2.0`, `2e0`. `None` for text that
/// is no finite number.
pub fn parse(text: &str) -> Option<Integer> {
    let text = text.trim();
    if let Ok(value) = text.parse::<i128>() {
        return Some(Integer(Read::Whole(value)));
    }
    // Rust also reads `inf`, `NaN` and `+1`, which JSON does not; only digits, signs, a point
    // and an exponent pass.
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    text.parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .map(|value| Integer(Read::of_f64(value)))
}

struct NumberVisitor {
    text: bool,
}

impl Visitor<'_> for NumberVisitor {
    type Value = Integer;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Integer, E> {
        Ok(Integer(Read::Whole(value.into())))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Integer, E> {
        Ok(Integer(Read::Whole(value.into())))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Integer, E> {
        Ok(Integer(Read::of_f64(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Integer, E> {
        if !self.text {
            return Err(E::invalid_type(de::Unexpected::Str(value), &self));
        }
        parse(value).ok_or_else(|| E::invalid_value(de::Unexpected::Str(value), &self))
    }
}

impl<'de> serde::Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NumberVisitor { text: false })
    }
}

impl<'de> serde::Deserialize<'de> for QueryInteger {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(NumberVisitor { text: true })
            .map(QueryInteger)
    }
}

/// `value` with every integral number written with a fraction (`3.0`) made an integer, for the
/// nested objects that serde reads afterwards by their own types (a time control, a game's
/// options, notification settings), none of which holds a fraction; a number with one is
/// refused, with `field` and the path to it.
pub fn integers_in(value: Value, field: &'static str) -> Result<Value, ApiError> {
    fn walk(value: Value, path: &mut String, field: &'static str) -> Result<Value, ApiError> {
        Ok(match value {
            Value::Number(number) if number.is_f64() => {
                let float = number.as_f64().unwrap_or(f64::NAN);
                match Read::of_f64(float) {
                    Read::Whole(whole) => match i64::try_from(whole) {
                        Ok(whole) => Value::Number(Number::from(whole)),
                        // Too large to be an integer here: left for the type to refuse.
                        Err(_) => Value::Number(number),
                    },
                    Read::Fraction(_) => {
                        return Err(ApiError::validation(
                            field,
                            format!("{path} must be a whole number, not {float}"),
                        ));
                    }
                }
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    let length = path.len();
                    path.push_str(&format!("[{i}]"));
                    out.push(walk(item, path, field)?);
                    path.truncate(length);
                }
                Value::Array(out)
            }
            Value::Object(members) => {
                let mut out = serde_json::Map::with_capacity(members.len());
                for (key, member) in members {
                    let length = path.len();
                    path.push('.');
                    path.push_str(&key);
                    let member = walk(member, path, field)?;
                    path.truncate(length);
                    out.insert(key, member);
                }
                Value::Object(out)
            }
            other => other,
        })
    }
    walk(value, &mut field.to_owned(), field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(json: &str) -> Result<Integer, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn whole_numbers_in_any_form_are_read() {
        for text in ["3", "3.0", "3e0", "0.3e1", "3.000"] {
            assert_eq!(read(text).unwrap().whole("n").unwrap(), 3, "{text}");
        }
        assert_eq!(read("-2.0").unwrap().get::<i32>("n").unwrap(), -2);
        assert!(read("\"3\"").is_err(), "a JSON string is no number");
        let error = read("3.5").unwrap().whole("days").unwrap_err();
        assert!(
            error.to_string().contains("whole number, not 3.5"),
            "{error}"
        );
        assert!(read("1e300").unwrap().get::<i64>("n").is_err());
        assert!(read("4294967296").unwrap().get::<u32>("n").is_err());
        assert!(
            read("1e300")
                .unwrap()
                .within("page", 1..=10, || "page is from 1 to 10".into())
                .is_err()
        );
    }

    #[test]
    fn query_text_reads_like_a_json_number() {
        for (text, value) in [("2", 2), ("2.0", 2), (" 7 ", 7), ("1e3", 1000)] {
            assert_eq!(parse(text).unwrap().whole("n").unwrap(), value, "{text}");
        }
        for text in ["", "first", "inf", "NaN", "0x10", "2,0"] {
            assert!(parse(text).is_none(), "{text}");
        }
        assert!(parse("2.5").unwrap().whole("n").is_err());
    }

    #[test]
    fn nested_integers_lose_their_fractions() {
        let value = integers_in(json!({"kind": "per_move", "days": 3.0}), "time_control").unwrap();
        assert_eq!(value, json!({"kind": "per_move", "days": 3}));
        assert_eq!(value["days"].as_u64(), Some(3));
        let listed = integers_in(json!({"reminder_hours": [24.0, 2]}), "settings").unwrap();
        assert_eq!(listed, json!({"reminder_hours": [24, 2]}));
        let error = integers_in(json!({"bank": {"max_days": 2.5}}), "time_control").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("time_control.bank.max_days must be a whole number, not 2.5"),
            "{error}"
        );
    }
}
