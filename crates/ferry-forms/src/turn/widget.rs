//! Date pickers whose calendar keeps the date in page JavaScript (flatpickr, the jQuery UI
//! datepicker): typing into their input does not reach the calendar, and flatpickr's input
//! is read-only. They are set through the library's own API in the page's world
//! (`widgets.js`), with the date read from the caller's value here; the page is then
//! inspected again, so the report shows what the input holds, not what the page answered.

use crate::inspection::Inspection;
use crate::snapshot::FillOutcome;
use ferry_browser::BrowserError;
use serde_json::{Value, json};

/// The adapters, a function declaration run with `this` bound to the control.
const WIDGETS_JS: &str = include_str!("../widgets.js");

/// Sets date picker `widget` (field `reference` of frame `frame`) to `value`.
pub(super) async fn set_date_picker(
    inspection: &Inspection,
    frame: usize,
    reference: u32,
    widget: &str,
    value: &Value,
) -> Result<FillOutcome, BrowserError> {
    let dates = match picker_dates(value) {
        Ok(dates) => dates,
        Err(error) => return Ok(FillOutcome::failure(reference, error)),
    };
    let answer = inspection
        .call_in_page(
            frame,
            reference,
            WIDGETS_JS,
            &[json!(widget), Value::from(dates)],
        )
        .await;
    Ok(match answer {
        Ok(answer) if answer["ok"] == true => FillOutcome::success(reference),
        Ok(answer) => FillOutcome::failure(
            reference,
            answer["error"]
                .as_str()
                .unwrap_or("the date picker did not take the date"),
        ),
        Err(BrowserError::Script { description }) => FillOutcome::failure(
            reference,
            format!("the date picker failed: {}", first_line(&description)),
        ),
        Err(other) => return Err(other),
    })
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The dates in a value for a date picker: one date, a list, or a range written
/// `2030-03-01 to 2030-03-08` (as flatpickr shows one); each with an optional `HH:MM`.
fn picker_dates(value: &Value) -> Result<Vec<Value>, String> {
    let texts: Vec<&str> = match value {
        Value::String(text) => text.split(" to ").collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => return Err("expected a date, like 2030-03-31".into()),
    };
    if texts.is_empty() || texts.iter().all(|t| t.trim().is_empty()) {
        return Err("expected a date, like 2030-03-31".into());
    }
    texts.into_iter().map(picker_date).collect()
}

/// `{year, month, day, hour?, minute?}` from ISO (`2030-03-31`, `2030-03-31 14:30`,
/// `2030-03-31T14:30`) or a date with its month named (`31 March 2030`). A date in numbers
/// alone in another order (`03/04/2030`) is refused: a calendar does not say which part is
/// the day.
fn picker_date(text: &str) -> Result<Value, String> {
    let text = text.trim();
    let (date, time) = match text.rsplit_once([' ', 'T']) {
        Some((date, time)) if time.contains(':') => (date, Some(time)),
        _ => (text, None),
    };
    let numeric = date
        .split(['-', '/', '.', ' '])
        .all(|t| t.bytes().all(|b| b.is_ascii_digit()));
    let iso = date.len() >= 4 && date.as_bytes()[..4].iter().all(u8::is_ascii_digit);
    if numeric && !iso {
        return Err(format!(
            "{text:?}: give the date as 2030-03-31 or with the month named (31 March 2030)"
        ));
    }
    let order = ["day", "month", "year"].map(String::from);
    let parts = crate::date_parts::split(date, &order)?;
    let number = |name: &str| {
        parts[name]
            .as_str()
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| format!("{text:?}: expected a whole date, like 2030-03-31"))
    };
    let mut out =
        json!({"year": number("year")?, "month": number("month")?, "day": number("day")?});
    if let Some(time) = time {
        let (hour, minute) = time
            .split_once(':')
            .and_then(|(h, m)| Some((h.parse::<u32>().ok()?, m.get(..2)?.parse::<u32>().ok()?)))
            .filter(|(h, m)| *h < 24 && *m < 60)
            .ok_or_else(|| format!("{time:?} is not a time (like 14:30)"))?;
        out["hour"] = json!(hour);
        out["minute"] = json!(minute);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_iso_named_months_times_and_ranges() {
        assert_eq!(
            picker_dates(&json!("2030-03-31")),
            Ok(vec![json!({"year": 2030, "month": 3, "day": 31})])
        );
        assert_eq!(
            picker_dates(&json!("31 March 2030 14:30")),
            Ok(vec![
                json!({"year": 2030, "month": 3, "day": 31, "hour": 14, "minute": 30})
            ])
        );
        assert_eq!(
            picker_dates(&json!("2030-03-01T09:05")),
            Ok(vec![
                json!({"year": 2030, "month": 3, "day": 1, "hour": 9, "minute": 5})
            ])
        );
        let range = picker_dates(&json!("2030-03-01 to 2030-03-08")).expect("a range");
        assert_eq!(range.len(), 2);
        assert_eq!(
            picker_dates(&json!(["2030-03-01", "2030-03-08"])),
            Ok(range)
        );
    }

    #[test]
    fn refuses_what_a_calendar_cannot_place() {
        for bad in [
            json!("03/04/2030"),
            json!("2030-02-30"),
            json!("2030-03-31 25:00"),
            json!(""),
            json!(true),
        ] {
            assert!(picker_dates(&bad).is_err(), "{bad} accepted");
        }
    }
}
