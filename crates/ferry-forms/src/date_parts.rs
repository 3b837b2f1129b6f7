//! One date value split into the day, month and year controls of a page.
//!
//! Pages ask for a date in parts (a design system's date input, a card's expiry month and
//! year); callers send one value. The value is read as ISO (`2030-03-31`, `2030-03`) or as
//! numbers and month names in the page's own order of parts (`31 3 2030`, `31/03/2030`,
//! `31 March 2030`, `03/2030`). A value that does not fit the parts is an error naming
//! what is wrong, never a partial fill.

use crate::value::RequestedValue;
use serde_json::{Map, Value};

/// Splits `value` into the parts `order` names (`day`, `month`, `year`, in page order):
/// `{"day": "31", "month": "3", "year": "2030"}` for the page script.
pub(crate) fn split(value: &str, order: &[String]) -> Result<Value, String> {
    let tokens: Vec<&str> = value
        .split(|c: char| c.is_whitespace() || matches!(c, '-' | '/' | '.' | ','))
        .filter(|t| !t.is_empty())
        .collect();
    let expected = order.len();
    let shape = || example(order);
    if tokens.len() != expected {
        return Err(format!(
            "expected {expected} parts ({}), like {}",
            order.join(", "),
            shape()
        ));
    }
    let mut day = None;
    let mut month = None;
    let mut year = None;
    let iso = tokens[0].len() == 4 && tokens[0].bytes().all(|b| b.is_ascii_digit());
    // ISO goes year, month, day; otherwise the page's order, with a month name wherever
    // it stands.
    let roles: Vec<&str> = if iso {
        ["year", "month", "day"]
            .into_iter()
            .filter(|r| order.iter().any(|o| o == r))
            .collect()
    } else {
        let named = tokens.iter().position(|t| month_number(t).is_some());
        let mut rest = order
            .iter()
            .map(String::as_str)
            .filter(|r| named.is_none() || *r != "month");
        (0..tokens.len())
            .map(|i| {
                if Some(i) == named {
                    "month"
                } else {
                    rest.next().unwrap_or("")
                }
            })
            .collect()
    };
    for (token, role) in tokens.iter().zip(roles) {
        match role {
            "day" => day = Some(number(token, "day", 1, 31)?),
            "month" => {
                month = Some(match month_number(token) {
                    Some(m) => m,
                    None => number(token, "month", 1, 12)?,
                })
            }
            "year" => year = Some(year_number(token)?),
            _ => return Err(format!("expected a date like {}", shape())),
        }
    }
    if let (Some(d), Some(m)) = (day, month)
        && d > days_in(m, year)
    {
        return Err(format!("day {d} does not exist in month {m}"));
    }
    let mut parts = Map::new();
    for (name, part) in [("day", day), ("month", month), ("year", year)] {
        if let Some(n) = part {
            parts.insert(name.into(), Value::String(n.to_string()));
        }
    }
    Ok(Value::Object(parts))
}

/// An example value in the page's order of parts.
fn example(order: &[String]) -> String {
    let part = |p: &str| match p {
        "day" => "31",
        "month" => "3",
        _ => "2030",
    };
    let local: Vec<&str> = order.iter().map(|p| part(p)).collect();
    let iso: Vec<&str> = ["year", "month", "day"]
        .into_iter()
        .filter(|r| order.iter().any(|o| o == r))
        .map(|r| match r {
            "day" => "31",
            "month" => "03",
            _ => "2030",
        })
        .collect();
    format!("\"{}\" or \"{}\"", iso.join("-"), local.join("/"))
}

fn number(token: &str, what: &str, min: u32, max: u32) -> Result<u32, String> {
    match token.parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) && token.len() <= 2 => Ok(n),
        _ => Err(format!("{token:?} is not a {what} ({min}–{max})")),
    }
}

fn year_number(token: &str) -> Result<u32, String> {
    match (token.len(), token.parse::<u32>()) {
        (4, Ok(n)) => Ok(n),
        // Two digits: this century, as card expiries are written.
        (2, Ok(n)) => Ok(2000 + n),
        _ => Err(format!("{token:?} is not a year (like 2030)")),
    }
}

/// January = 1, from an English month name or its first three letters.
fn month_number(token: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let t = token.to_ascii_lowercase();
    if t.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| m.starts_with(&t) || (t.len() == 3 && m.starts_with(&t[..3])))
        .and_then(|i| u32::try_from(i + 1).ok())
}

fn days_in(month: u32, year: Option<u32>) -> u32 {
    match month {
        2 => match year {
            Some(y) if !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) => 28,
            _ => 29,
        },
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A request's values, key by key.
type Values = Vec<(String, RequestedValue)>;

/// A date given part by part: the keys of the request that name one part of a date-in-parts
/// field ("Day", "Month", "Year"; "Date of birth day", "Expiry month"), gathered into one
/// value for that field, under the field's own question as the key, in the page's order of
/// parts; with a note of which keys went where. A bare part key names the only date field
/// that has that part; a longer one the date field whose question holds the rest of the key.
/// Keys that name no single date stay as they are (the matcher reports them).
pub(crate) fn gather(
    values: &[(String, RequestedValue)],
    dates: &[(String, Vec<String>)],
) -> Option<(Values, Vec<String>)> {
    let parts: Vec<(usize, &str, String, &str)> = values
        .iter()
        .enumerate()
        .filter_map(|(index, (key, value))| match value {
            RequestedValue::Text(text) => {
                let (role, rest) = part_of(key)?;
                Some((index, role, rest, text.as_str()))
            }
            _ => None,
        })
        .collect();
    // The roles given bare: together they name a date that has all of them.
    let bare: Vec<&str> = parts
        .iter()
        .filter(|(_, _, rest, _)| rest.is_empty())
        .map(|(_, role, _, _)| *role)
        .collect();
    let mut per_date: Vec<Vec<(usize, &str, String)>> = vec![Vec::new(); dates.len()];
    // Named keys first ("Expiry month"), then bare ones, each to the one date it fits.
    let named = parts.iter().filter(|p| !p.2.is_empty());
    for (index, role, rest, text) in named.chain(parts.iter().filter(|p| p.2.is_empty())) {
        let has = |d: usize, role: &str| dates[d].1.iter().any(|p| p == role);
        let free = |d: usize| !per_date[d].iter().any(|(_, r, _)| r == role);
        let mut fits: Vec<usize> = (0..dates.len())
            .filter(|d| has(*d, role) && free(*d))
            .filter(|d| rest.is_empty() || dates[*d].0.to_lowercase().contains(rest.as_str()))
            .collect();
        if fits.len() > 1 && rest.is_empty() {
            fits.retain(|d| bare.iter().all(|r| has(*d, r)));
        }
        if let [only] = fits[..] {
            per_date[only].push((*index, role, (*text).to_owned()));
        }
    }
    if per_date.iter().all(Vec::is_empty) {
        return None;
    }
    let mut taken = vec![false; values.len()];
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for ((question, order), given) in dates.iter().zip(&per_date) {
        if given.is_empty() {
            continue;
        }
        let keys = given
            .iter()
            .map(|(i, _, _)| values[*i].0.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        notes.push(format!(
            "{keys}: read as the parts of the date {question:?}"
        ));
        let value = order
            .iter()
            .filter_map(|role| given.iter().find(|(_, r, _)| r == role))
            .map(|(_, _, text)| text.trim())
            .collect::<Vec<_>>()
            .join(" ");
        for (i, _, _) in given {
            taken[*i] = true;
        }
        out.push((question.clone(), RequestedValue::Text(value)));
    }
    let rest = values
        .iter()
        .zip(&taken)
        .filter(|(_, taken)| !**taken)
        .map(|(kv, _)| kv.clone());
    Some((rest.chain(out).collect(), notes))
}

/// The part a key names (`day`, `month`, `year`) and the rest of the key, lowercased.
fn part_of(key: &str) -> Option<(&'static str, String)> {
    let words: Vec<String> = key
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let (last, rest) = words.split_last()?;
    let role = match last.as_str() {
        "day" | "tag" | "jour" | "dia" | "día" | "giorno" | "dag" => "day",
        "month" | "monat" | "mois" | "mes" | "mese" | "maand" => "month",
        "year" | "jahr" | "année" | "annee" | "año" | "ano" | "anno" | "jaar" => "year",
        _ => return None,
    };
    Some((role, rest.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> RequestedValue {
        RequestedValue::Text(s.into())
    }

    #[test]
    fn parts_given_one_by_one_become_one_value_in_the_pages_order() {
        let dates = vec![
            ("What is your date of birth?".to_owned(), dmy()),
            (
                "Expiry date".to_owned(),
                vec!["month".into(), "year".into()],
            ),
        ];
        let values = vec![
            ("Full name".to_owned(), text("Ada")),
            ("Date of birth year".to_owned(), text("1815")),
            ("Date of birth – Day".to_owned(), text("10")),
            ("Date of birth month".to_owned(), text("December")),
            ("Expiry month".to_owned(), text("03")),
            ("Expiry year".to_owned(), text("2030")),
        ];
        let (gathered, notes) = gather(&values, &dates).expect("gathered");
        assert_eq!(
            gathered,
            vec![
                ("Full name".to_owned(), text("Ada")),
                (
                    "What is your date of birth?".to_owned(),
                    text("10 December 1815")
                ),
                ("Expiry date".to_owned(), text("03 2030")),
            ]
        );
        assert_eq!(
            notes[0],
            "Date of birth year, Date of birth – Day, Date of birth month: read as the parts of the date \"What is your date of birth?\""
        );
        // "Year" alone fits both dates: it stays as it is.
        let both = vec![("Year".to_owned(), text("2030"))];
        assert_eq!(gather(&both, &dates), None);
        assert_eq!(gather(&[("Name".to_owned(), text("Ada"))], &dates), None);
    }

    fn dmy() -> Vec<String> {
        vec!["day".into(), "month".into(), "year".into()]
    }

    #[test]
    fn reads_iso_and_the_pages_order() {
        let want = json!({"day": "31", "month": "3", "year": "2030"});
        for value in [
            "2030-03-31",
            "31 3 2030",
            "31/03/2030",
            "31.3.2030",
            "31 March 2030",
            "March 31 2030",
        ] {
            assert_eq!(split(value, &dmy()), Ok(want.clone()), "{value}");
        }
        let mdy = vec!["month".into(), "day".into(), "year".into()];
        assert_eq!(split("03/31/2030", &mdy), Ok(want.clone()));
        let expiry = vec!["month".into(), "year".into()];
        assert_eq!(
            split("03/30", &expiry),
            Ok(json!({"month": "3", "year": "2030"}))
        );
        assert_eq!(
            split("2030-03", &expiry),
            Ok(json!({"month": "3", "year": "2030"}))
        );
    }

    #[test]
    fn a_value_that_does_not_fit_is_an_error() {
        for (value, needle) in [
            ("31 3", "expected 3 parts"),
            ("2030-03-31-1", "expected 3 parts"),
            ("31 13 2030", "not a month"),
            ("32 3 2030", "not a day"),
            ("31 4 2030", "does not exist"),
            ("29 2 2029", "does not exist"),
            ("31 3 20300", "not a year"),
            ("tomorrow", "expected 3 parts"),
        ] {
            let error = split(value, &dmy()).expect_err(value);
            assert!(error.contains(needle), "{value}: {error}");
        }
        assert!(split("29 2 2028", &dmy()).is_ok());
    }
}
