//! The autofill purposes, the planner, and how labels as forms print them are read.

use super::*;
use serde_json::json;

/// An empty visible text field with these labels (`(source, text)`), attributes and
/// autocomplete.
fn field(kind: &str, label: &str, name: Option<&str>, autocomplete: Option<&str>) -> FieldInfo {
    serde_json::from_value(json!({
        "ref": 1, "tag": "input", "type": kind,
        "labels": if label.is_empty() { json!([]) } else { json!([{"source": "label", "text": label}]) },
        "label": label, "name": name, "value": "", "empty": true, "visible": true,
        "constraints": {"autocomplete": autocomplete},
    }))
    .expect("a field")
}

fn labelled(label: &str) -> FieldInfo {
    field("text", label, None, None)
}

fn token(f: &FieldInfo) -> Option<&'static str> {
    purpose(f).map(|p| p.token)
}

#[test]
fn autocomplete_tokens_win_and_qualifiers_are_skipped() {
    for (attr, want) in [
        ("given-name", Some("given-name")),
        ("shipping postal-code", Some("postal-code")),
        ("section-a billing street-address", Some("street-address")),
        ("work email", Some("email")),
        ("home tel", Some("tel")),
        ("off", None),
        ("on", None),
        ("nonsense", None),
        ("ONE-TIME-CODE", Some("one-time-code")),
    ] {
        assert_eq!(
            purpose_by_autocomplete(attr).map(|p| p.token),
            want,
            "{attr}"
        );
    }
    // The token wins over a label that says something else.
    assert_eq!(
        token(&field("text", "Nachname", None, Some("email"))),
        Some("email")
    );
}

#[test]
fn labels_mean_their_purpose_in_four_languages() {
    for (label, want) in [
        ("Surname", "family-name"),
        ("Last name", "family-name"),
        ("Family name *", "family-name"),
        ("Nachname", "family-name"),
        ("Nom", "family-name"),
        ("Nom de famille", "family-name"),
        ("Apellido", "family-name"),
        ("Apellidos:", "family-name"),
        ("First name", "given-name"),
        ("Vorname", "given-name"),
        ("Prénom", "given-name"),
        ("Nombre", "given-name"),
        ("E-Mail-Adresse", "email"),
        ("Courriel", "email"),
        ("Correo electrónico", "email"),
        ("Telefonnummer", "tel"),
        ("Numéro de téléphone", "tel"),
        ("Teléfono", "tel"),
        ("PLZ", "postal-code"),
        ("Code postal", "postal-code"),
        ("Código postal", "postal-code"),
        ("ZIP code", "postal-code"),
        ("Straße und Hausnummer", "street-address"),
        ("Dirección", "street-address"),
        ("Ville", "address-level2"),
        ("Ciudad", "address-level2"),
        ("Geburtsdatum", "bday"),
        ("Date de naissance", "bday"),
        ("Fecha de nacimiento", "bday"),
        ("Firma", "organization"),
        ("Empresa", "organization"),
        ("Land", "country-name"),
        ("País", "country-name"),
        ("Nachname (wie im Pass)", "family-name"),
    ] {
        assert_eq!(token(&labelled(label)), Some(want), "{label}");
    }
    // Attribute names too: `lastName`, `last_name`.
    assert_eq!(
        token(&field("text", "", Some("lastName"), None)),
        Some("family-name")
    );
    assert_eq!(
        token(&field("text", "", Some("postal_code"), None)),
        Some("postal-code")
    );
    assert_eq!(token(&labelled("Favourite colour")), None);
}

#[test]
fn secrets_are_recognised_by_type_token_and_name() {
    for f in [
        field("password", "Anything", None, None),
        field("text", "Code", None, Some("one-time-code")),
        field("text", "x", None, Some("cc-csc")),
        labelled("CVV"),
        labelled("Sicherheitscode"),
        labelled("Mot de passe"),
        labelled("Contraseña"),
        labelled("Verification code"),
        labelled("Bestätigungscode"),
    ] {
        assert!(is_secret(&f), "{:?}", f.label);
    }
    assert!(!is_secret(&labelled("Email")));
    // Boxes the page script marks secret (a code one character a box): never auto-filled,
    // whatever the label says; a phone number in boxes is not a secret.
    let mut code_boxes = field("split", "Your number", None, None);
    code_boxes.secret = true;
    assert!(is_secret(&code_boxes));
    assert!(!is_secret(&field("split", "Phone number", None, None)));
}

fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn candidates(fields: &[FieldInfo]) -> Vec<Candidate<'_>> {
    fields
        .iter()
        .enumerate()
        .map(|(id, field)| Candidate { id, field })
        .collect()
}

#[test]
fn plans_from_context_then_profile_and_never_secrets() {
    let fields = [
        labelled("Vorname"),
        labelled("Nachname"),
        field("email", "E-Mail", None, Some("email")),
        field("password", "Passwort", None, Some("current-password")),
        labelled("CVC"),
        field("text", "Kartennummer", None, Some("cc-number")),
        labelled("Mitgliedsnummer"),
        labelled("PLZ"),
    ];
    let profile = values(&[
        ("given-name", "Ada"),
        ("family-name", "Lovelace"),
        ("email", "ada@example.com"),
        ("current-password", "hunter2"),
        ("cc-csc", "123"),
        ("cc-number", "4111111111111111"),
        ("Mitgliedsnummer", "M-42"),
        ("Passwort", "hunter2"),
    ]);
    let context = values(&[("email", "ada@work.example")]);
    let sources = [
        Source {
            name: "context",
            values: &context,
            cards: false,
        },
        Source {
            name: "profile:home",
            values: &profile,
            cards: false,
        },
    ];
    // The caller's explicit values took the first name.
    let taken: HashSet<usize> = [0].into_iter().collect();
    let got = plan(&candidates(&fields), &taken, &sources);
    let got: Vec<(usize, &str, &str)> = got
        .iter()
        .map(|p| (p.field, p.value.as_str(), p.from.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "Lovelace", "profile:home"),
            (2, "ada@work.example", "context"),
            (6, "M-42", "profile:home"),
        ]
    );
}

#[test]
fn card_numbers_only_from_a_source_marked_for_cards() {
    let fields = [
        field("text", "Card number", None, Some("cc-number")),
        labelled("Name on card"),
        labelled("Security code"),
    ];
    let wallet = values(&[
        ("cc-number", "4111111111111111"),
        ("cc-name", "Ada Lovelace"),
        ("cc-csc", "123"),
    ]);
    let unmarked = [Source {
        name: "profile:home",
        values: &wallet,
        cards: false,
    }];
    let got = plan(&candidates(&fields), &HashSet::new(), &unmarked);
    assert_eq!(got.iter().map(|p| p.field).collect::<Vec<_>>(), vec![1]);
    let marked = [Source {
        name: "profile:card",
        values: &wallet,
        cards: true,
    }];
    let got = plan(&candidates(&fields), &HashSet::new(), &marked);
    assert_eq!(got.iter().map(|p| p.field).collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn composite_values_fill_their_parts_and_wholes() {
    let fields = [labelled("Full name"), labelled("Address line 1")];
    let profile = values(&[
        ("given-name", "Ada"),
        ("family-name", "Lovelace"),
        ("street-address", "12 St James's Square\nFlat 3"),
    ]);
    let sources = [Source {
        name: "profile:home",
        values: &profile,
        cards: false,
    }];
    let got = plan(&candidates(&fields), &HashSet::new(), &sources);
    assert_eq!(got[0].value, "Ada Lovelace");
    assert_eq!(got[1].value, "12 St James's Square");
}

#[test]
fn filled_disabled_and_read_only_fields_are_left_alone() {
    let mut full = labelled("Email");
    full.empty = false;
    let mut disabled = labelled("Email");
    disabled.disabled = true;
    let mut read_only = labelled("Email");
    read_only.read_only = true;
    let fields = [full, disabled, read_only];
    let profile = values(&[("email", "ada@example.com")]);
    let sources = [Source {
        name: "profile:home",
        values: &profile,
        cards: false,
    }];
    assert!(plan(&candidates(&fields), &HashSet::new(), &sources).is_empty());
}

/// How `auto` reads labels as forms print them (tests/autofill-labels.tsv, written from
/// real forms, not from the table): the share read right, per language; never a secret
/// read as something fillable; few false or wrong purposes (a miss only leaves a field
/// empty, a wrong purpose fills it with the wrong value).
#[test]
fn labels_as_forms_print_them_are_read_right() {
    let corpus = include_str!("../../tests/autofill-labels.tsv");
    let mut per_language: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut missed, mut wrong, mut unsafe_secrets) = (Vec::new(), Vec::new(), Vec::new());
    for line in corpus
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut columns = line.split('\t');
        let (Some(language), Some(label), Some(expected)) =
            (columns.next(), columns.next(), columns.next())
        else {
            panic!("bad corpus line {line:?}");
        };
        let got = purpose_by_meaning(&labelled(label)).map_or("-", |p| p.token);
        let tally = per_language.entry(language).or_default();
        tally.1 += 1;
        let never =
            |token: &str| purpose_of_token(token).is_some_and(|p| p.secrecy == Secrecy::Never);
        // One secret for another is as good: neither is ever filled.
        if got == expected || (never(got) && never(expected)) {
            tally.0 += 1;
            continue;
        }
        let secret = purpose_of_token(expected).is_some_and(|p| p.secrecy == Secrecy::Never);
        let fillable = purpose_of_token(got).is_some_and(|p| p.secrecy != Secrecy::Never);
        if secret && (got == "-" || fillable) {
            unsafe_secrets.push(format!("{language} {label:?}: {got}"));
        } else if got == "-" {
            missed.push(format!("{language} {label:?} (want {expected})"));
        } else {
            wrong.push(format!("{language} {label:?}: {got}, want {expected}"));
        }
    }
    let (right, total) = per_language
        .values()
        .fold((0, 0), |(r, t), (a, b)| (r + a, t + b));
    for (language, (r, t)) in &per_language {
        eprintln!("auto label accuracy {language}: {r}/{t}");
    }
    eprintln!("auto label accuracy, all: {right}/{total}; missed {missed:?}; wrong {wrong:?}");
    assert!(
        unsafe_secrets.is_empty(),
        "secrets not recognised: {unsafe_secrets:?}"
    );
    assert!(wrong.len() <= 2, "wrong purposes: {wrong:?}");
    assert!(
        right * 100 >= total * 95,
        "{right}/{total} read right; missed {missed:?}; wrong {wrong:?}"
    );
}
