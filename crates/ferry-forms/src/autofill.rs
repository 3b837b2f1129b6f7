//! `"auto": true`: which saved value may fill an empty field, by what the field is for.
//!
//! A field's purpose is a WHATWG autofill field name (`given-name`, `postal-code`, …, see
//! [`PURPOSES`]), found the way browsers' autofill finds it:
//!
//! 1. the field's `autocomplete` attribute: its last token that names a field, after the
//!    optional `section-*`, `shipping` / `billing` and `home` / `work` / `mobile` … tokens
//!    (`autocomplete="shipping postal-code"` is `postal-code`; `off` and `on` name nothing);
//! 2. else its label, aria label, legend, placeholder, `name` or `id`, normalised like the
//!    matcher's keys, against a table of what each purpose is called in English, German,
//!    French and Spanish ("Surname", "Nachname", "Nom", "Apellido" are `family-name`);
//! 3. else nothing: a saved value whose key is a free label (not a WHATWG name) is then
//!    matched to the remaining fields by the ordinary matcher, as an explicit key would be.
//!
//! Secrets are never auto-filled, wherever the value comes from: a password field, a
//! one-time code, a card security code — by `type="password"`, by their autocomplete tokens
//! or by their names in the four languages. A card number or expiry only from a source
//! marked for cards ([`Source::cards`]). Fields the caller's explicit `values` took are not
//! touched, and neither are fields that already hold a value.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::matcher::{Candidate, fold_accents, match_keys, normalize};
use crate::snapshot::{FieldInfo, LabelSource};

/// How freely a purpose's value may be filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Secrecy {
    /// From any source.
    Open,
    /// A payment card's number or expiry: only from a source marked for cards.
    Card,
    /// Never auto-filled (passwords, one-time codes, card security codes).
    Never,
}

/// One autofill field name: its secrecy and what forms call it.
#[derive(Debug)]
pub(crate) struct Purpose {
    /// The WHATWG autofill field name.
    pub token: &'static str,
    /// How freely it may be filled.
    pub secrecy: Secrecy,
    /// Labels that mean it, in English, German, French and Spanish, as [`normalize`] and
    /// accent folding leave them.
    pub names: &'static [&'static str],
}

const fn open(token: &'static str, names: &'static [&'static str]) -> Purpose {
    Purpose {
        token,
        secrecy: Secrecy::Open,
        names,
    }
}

const fn card(token: &'static str, names: &'static [&'static str]) -> Purpose {
    Purpose {
        token,
        secrecy: Secrecy::Card,
        names,
    }
}

const fn never(token: &'static str, names: &'static [&'static str]) -> Purpose {
    Purpose {
        token,
        secrecy: Secrecy::Never,
        names,
    }
}

/// The purposes ferry recognises, with their names. A label names a purpose when it
/// normalises to one of these (accents folded), or when its core (the text before a
/// parenthesis, colon or dash) does.
pub(crate) const PURPOSES: &[Purpose] = &[
    open(
        "given-name",
        &[
            "first name",
            "given name",
            "forename",
            "firstname",
            "fname",
            "vorname",
            "prenom",
            "nombre",
            "nombre de pila",
            "primer nombre",
        ],
    ),
    open(
        "additional-name",
        &[
            "middle name",
            "middle names",
            "middle initial",
            "zweiter vorname",
            "deuxieme prenom",
            "autres prenoms",
            "segundo nombre",
        ],
    ),
    open(
        "family-name",
        &[
            "last name",
            "surname",
            "family name",
            "lastname",
            "lname",
            "nachname",
            "familienname",
            "zuname",
            "nom",
            "nom de famille",
            "apellido",
            "apellidos",
            "primer apellido",
        ],
    ),
    open(
        "name",
        &[
            "full name",
            "your name",
            "name",
            "fullname",
            "vollstandiger name",
            "vor und nachname",
            "nom complet",
            "prenom et nom",
            "nom et prenom",
            "nombre completo",
            "nombre y apellidos",
        ],
    ),
    open(
        "email",
        &[
            "email",
            "e mail",
            "email address",
            "e mail address",
            "your email",
            "mail",
            "e mail adresse",
            "email adresse",
            "courriel",
            "adresse e mail",
            "adresse email",
            "adresse electronique",
            "correo",
            "correo electronico",
            "email de contacto",
        ],
    ),
    open(
        "tel",
        &[
            "phone",
            "telephone",
            "phone number",
            "telephone number",
            "mobile",
            "mobile number",
            "mobile phone",
            "cell phone",
            "tel",
            "telefon",
            "telefonnummer",
            "handy",
            "handynummer",
            "mobilnummer",
            "numero de telephone",
            "portable",
            "telephone portable",
            "telefono",
            "numero de telefono",
            "movil",
            "telefono movil",
            "numero de movil",
            "celular",
        ],
    ),
    open(
        "street-address",
        &[
            "address",
            "street address",
            "street",
            "street and number",
            "home address",
            "adresse",
            "strasse",
            "strasse und hausnummer",
            "anschrift",
            "rue",
            "adresse postale",
            "numero et rue",
            "direccion",
            "calle",
            "domicilio",
            "direccion postal",
        ],
    ),
    open(
        "address-line1",
        &[
            "address line 1",
            "address 1",
            "adresszeile 1",
            "adresse ligne 1",
            "direccion linea 1",
        ],
    ),
    open(
        "address-line2",
        &[
            "address line 2",
            "address 2",
            "apartment",
            "apt",
            "suite",
            "apartment suite",
            "adresszeile 2",
            "adresszusatz",
            "adresse ligne 2",
            "complement d adresse",
            "complement dadresse",
            "direccion linea 2",
            "piso",
            "apartamento",
        ],
    ),
    open(
        "address-level2",
        &[
            "city",
            "town",
            "town city",
            "city town",
            "stadt",
            "ort",
            "wohnort",
            "ville",
            "localite",
            "commune",
            "ciudad",
            "localidad",
            "municipio",
            "poblacion",
        ],
    ),
    open(
        "address-level1",
        &[
            "state",
            "province",
            "region",
            "county",
            "state province",
            "bundesland",
            "kanton",
            "departement",
            "provincia",
            "estado",
            "comunidad autonoma",
        ],
    ),
    open(
        "postal-code",
        &[
            "zip",
            "zip code",
            "zipcode",
            "postal code",
            "postcode",
            "post code",
            "plz",
            "postleitzahl",
            "code postal",
            "cp",
            "codigo postal",
        ],
    ),
    open(
        "country-name",
        &["country", "country region", "land", "staat", "pays", "pais"],
    ),
    open("country", &[]),
    open(
        "bday",
        &[
            "birthday",
            "date of birth",
            "birth date",
            "birthdate",
            "dob",
            "geburtsdatum",
            "geburtstag",
            "date de naissance",
            "fecha de nacimiento",
            "fecha nacimiento",
        ],
    ),
    open("bday-day", &[]),
    open("bday-month", &[]),
    open("bday-year", &[]),
    open(
        "organization",
        &[
            "company",
            "company name",
            "organization",
            "organisation",
            "employer",
            "business",
            "firma",
            "unternehmen",
            "arbeitgeber",
            "entreprise",
            "societe",
            "organisme",
            "empresa",
            "organizacion",
            "compania",
        ],
    ),
    open(
        "organization-title",
        &[
            "job title",
            "title at work",
            "position",
            "role",
            "berufsbezeichnung",
            "position im unternehmen",
            "fonction",
            "titre du poste",
            "poste",
            "cargo",
            "puesto",
        ],
    ),
    open(
        "url",
        &[
            "website",
            "homepage",
            "web site",
            "url",
            "webseite",
            "site web",
            "site internet",
            "sitio web",
            "pagina web",
        ],
    ),
    open(
        "username",
        &[
            "username",
            "user name",
            "login",
            "benutzername",
            "nom d utilisateur",
            "identifiant",
            "usuario",
            "nombre de usuario",
        ],
    ),
    open(
        "sex",
        &[
            "gender",
            "sex",
            "geschlecht",
            "sexe",
            "genre",
            "genero",
            "sexo",
        ],
    ),
    open(
        "honorific-prefix",
        &["title", "salutation", "anrede", "civilite", "tratamiento"],
    ),
    open(
        "language",
        &[
            "language",
            "preferred language",
            "sprache",
            "langue",
            "idioma",
        ],
    ),
    open(
        "cc-name",
        &[
            "name on card",
            "cardholder name",
            "card holder",
            "cardholder",
            "karteninhaber",
            "name des karteninhabers",
            "titulaire de la carte",
            "nom du titulaire",
            "titular de la tarjeta",
            "nombre del titular",
        ],
    ),
    card(
        "cc-number",
        &[
            "card number",
            "credit card number",
            "credit card",
            "debit card number",
            "kartennummer",
            "kreditkartennummer",
            "numero de carte",
            "numero de la carte",
            "numero de tarjeta",
            "numero de la tarjeta",
        ],
    ),
    card(
        "cc-exp",
        &[
            "expiry",
            "expiry date",
            "expiration",
            "expiration date",
            "exp date",
            "valid thru",
            "ablaufdatum",
            "gultig bis",
            "date d expiration",
            "date dexpiration",
            "fecha de caducidad",
            "fecha de vencimiento",
            "vencimiento",
        ],
    ),
    card("cc-exp-month", &["expiry month", "expiration month"]),
    card("cc-exp-year", &["expiry year", "expiration year"]),
    never(
        "cc-csc",
        &[
            "cvv",
            "cvc",
            "cvv2",
            "csc",
            "security code",
            "card security code",
            "card verification code",
            "verification number",
            "prufnummer",
            "kartenprufnummer",
            "sicherheitscode",
            "cryptogramme",
            "cryptogramme visuel",
            "code de securite",
            "codigo de seguridad",
        ],
    ),
    never(
        "current-password",
        &[
            "password",
            "current password",
            "passwort",
            "kennwort",
            "mot de passe",
            "contrasena",
            "clave",
        ],
    ),
    never(
        "new-password",
        &[
            "new password",
            "confirm password",
            "repeat password",
            "neues passwort",
            "passwort wiederholen",
            "nouveau mot de passe",
            "confirmer le mot de passe",
            "nueva contrasena",
            "confirmar contrasena",
        ],
    ),
    never(
        "one-time-code",
        &[
            "one time code",
            "one time password",
            "otp",
            "verification code",
            "2fa code",
            "sms code",
            "security pin",
            "pin",
            "tan",
            "bestatigungscode",
            "einmalcode",
            "einmalpasswort",
            "code de verification",
            "code de confirmation",
            "code sms",
            "codigo de verificacion",
            "codigo de un solo uso",
        ],
    ),
];

/// Autocomplete tokens that qualify the field name after them.
const QUALIFIERS: &[&str] = &[
    "shipping", "billing", "home", "work", "mobile", "fax", "pager", "webauthn",
];

fn purpose_of_token(token: &str) -> Option<&'static Purpose> {
    PURPOSES.iter().find(|p| p.token == token)
}

/// The purpose an `autocomplete` attribute names, if any.
pub(crate) fn purpose_by_autocomplete(attribute: &str) -> Option<&'static Purpose> {
    let tokens: Vec<String> = attribute
        .split_ascii_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    tokens
        .iter()
        .filter(|t| !t.starts_with("section-") && !QUALIFIERS.contains(&t.as_str()))
        .find_map(|t| purpose_of_token(t))
}

/// A label as the names table spells it: normalised, accents folded, and an apostrophe
/// between words ("l'entreprise", "d'adresse") a space, as the table writes elisions.
fn spelled(text: &str) -> String {
    fold_accents(&normalize(&text.replace(['\'', '\u{2019}'], " ")))
}

/// The purpose a field's label (or other name) means, strongest name first.
pub(crate) fn purpose_by_meaning(field: &FieldInfo) -> Option<&'static Purpose> {
    let texts = field
        .labels
        .iter()
        .map(|l| (l.source, l.text.as_str()))
        .chain(std::iter::once((LabelSource::Label, field.label.as_str())))
        .chain(field.name.as_deref().map(|n| (LabelSource::Name, n)))
        .chain(field.id.as_deref().map(|i| (LabelSource::Id, i)));
    let texts: Vec<&str> = texts.map(|(_, text)| text).collect();
    // A secret's name anywhere in a label makes it a secret ("Retype password", "CVV (3
    // digits)"): a wrong guess only leaves a field empty.
    for text in &texts {
        let words = format!(" {} ", spelled(text));
        if let Some(p) = PURPOSES
            .iter()
            .filter(|p| p.secrecy == Secrecy::Never)
            .find(|p| p.names.iter().any(|n| words.contains(&format!(" {n} "))))
        {
            return Some(p);
        }
    }
    for text in texts {
        for form in readings(text) {
            let compact = form.replace(' ', "");
            if let Some(p) = PURPOSES.iter().find(|p| {
                p.names
                    .iter()
                    .any(|n| *n == form || n.replace(' ', "") == compact)
            }) {
                return Some(p);
            }
        }
    }
    None
}

/// The ways a label may be read, most literal first: as it is; its core (before a
/// parenthesis, colon, slash or dash, or the first of alternatives: "Ville ou commune"); each
/// without a possessive ("Your email", "Ihre E-Mail-Adresse"); each without a word that only
/// says "the name or number of" ("Organization name", "Nom de l'entreprise", "Mobile phone
/// number", "Número de teléfono").
fn readings(text: &str) -> Vec<String> {
    let mut forms = vec![spelled(text)];
    if let Some(core) = core_of(text) {
        forms.push(spelled(core));
    }
    let unowned: Vec<String> = forms.iter().filter_map(|f| without_possessive(f)).collect();
    forms.extend(unowned);
    let bare: Vec<String> = forms.iter().filter_map(|f| without_carrier(f)).collect();
    forms.extend(bare);
    forms.retain(|f| !f.is_empty());
    forms
}

/// Words that address the reader and say nothing of the field ("Your", "Ihre", "Votre",
/// "Tu"), as a spelled label starts with them.
const POSSESSIVES: &[&str] = &[
    "your", "my", "ihre", "ihr", "deine", "dein", "meine", "mein", "votre", "vos", "ton", "ta",
    "tes", "mon", "ma", "mes", "tu", "tus", "su", "sus", "mi", "mis",
];

/// A spelled label without the possessive it starts with, if it starts with one.
fn without_possessive(spelled: &str) -> Option<String> {
    let (first, rest) = spelled.split_once(' ')?;
    (POSSESSIVES.contains(&first) && !rest.is_empty()).then(|| rest.to_owned())
}

/// Words around a field's subject that only say "its name" or "its number", as a spelled
/// label starts or ends with them.
const CARRIER_HEADS: &[&str] = &[
    "numero de la ",
    "numero de ",
    "nom de l ",
    "nom de la ",
    "nom du ",
    "nom de ",
    "nombre de la ",
    "nombre del ",
    "nombre de ",
    "name of the ",
    "name of ",
];
const CARRIER_TAILS: &[&str] = &[" name", " number", " no", " nr", " nummer"];

/// A spelled label without such words, if it has them (and something else).
fn without_carrier(spelled: &str) -> Option<String> {
    let head = CARRIER_HEADS.iter().find_map(|h| spelled.strip_prefix(h));
    let tail = CARRIER_TAILS.iter().find_map(|t| spelled.strip_suffix(t));
    head.or(tail)
        .map(str::trim)
        .filter(|rest| !rest.is_empty())
        .map(str::to_owned)
}

/// A label's core: the text before a parenthesis, colon, slash, dash or comma ("Nachname
/// (wie im Pass)", "Zip/Postal code"), or before the second of two alternatives ("Ville ou
/// commune", "Phone or email").
fn core_of(label: &str) -> Option<&str> {
    let cut = [
        "(", ":", " - ", " – ", "/", ",", " or ", " oder ", " ou ", " o ",
    ]
    .iter()
    .filter_map(|sep| label.find(sep))
    .min()?;
    let core = label[..cut].trim();
    (core.chars().count() >= 2).then_some(core)
}

/// What a field is for: its autocomplete token, else its meaning.
pub(crate) fn purpose(field: &FieldInfo) -> Option<&'static Purpose> {
    field
        .constraints
        .autocomplete
        .as_deref()
        .and_then(purpose_by_autocomplete)
        .or_else(|| purpose_by_meaning(field))
}

/// True when a field must never be auto-filled whatever its source: a password input, or a
/// field whose purpose is a secret.
pub(crate) fn is_secret(field: &FieldInfo) -> bool {
    field.kind == "password" || purpose(field).is_some_and(|p| p.secrecy == Secrecy::Never)
}

/// Where auto-filled values come from, in order of preference.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    /// How the report names it: `context`, `profile:home`.
    pub name: &'a str,
    /// Its values, by WHATWG field name or free label.
    pub values: &'a BTreeMap<String, String>,
    /// Whether it may fill card numbers and expiry dates.
    pub cards: bool,
}

/// One field to fill, and from where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Planned {
    /// The candidate's id.
    pub field: usize,
    /// The value.
    pub value: String,
    /// The source's name.
    pub from: String,
}

/// The value `source` holds for `purpose`: under its own name, or one it is made of or part
/// of (a full name from its parts, the first line of an address from the street address).
fn value_for(source: &Source<'_>, purpose: &Purpose) -> Option<String> {
    let get = |k: &str| {
        source
            .values
            .get(k)
            .filter(|v| !v.trim().is_empty())
            .cloned()
    };
    if let Some(v) = get(purpose.token) {
        return Some(v);
    }
    match purpose.token {
        "name" => match (get("given-name"), get("family-name")) {
            (Some(g), Some(f)) => Some(format!("{g} {f}")),
            _ => None,
        },
        "address-line1" => get("street-address").map(|s| s.lines().next().unwrap_or("").to_owned()),
        "street-address" => get("address-line1"),
        "country-name" => get("country"),
        "country" => get("country-name"),
        "cc-exp" => match (get("cc-exp-month"), get("cc-exp-year")) {
            (Some(m), Some(y)) => Some(format!("{m}/{y}")),
            _ => None,
        },
        _ => None,
    }
}

/// Plans `auto`: a value for each empty, enabled, non-secret field of `candidates` that
/// `taken` (the fields explicit values went to) does not hold, from the first of `sources`
/// that has one. Fields with a purpose take the source's value of that purpose; the
/// sources' free labels are then matched to what is left by the ordinary matcher.
pub(crate) fn plan(
    candidates: &[Candidate<'_>],
    taken: &HashSet<usize>,
    sources: &[Source<'_>],
) -> Vec<Planned> {
    let open: Vec<&Candidate<'_>> = candidates
        .iter()
        .filter(|c| {
            let f = c.field;
            f.empty
                && !f.disabled
                && !f.read_only
                && !taken.contains(&c.id)
                && !matches!(f.kind.as_str(), "file" | "checkbox" | "checkbox-group")
                && !is_secret(f)
        })
        .collect();
    let mut planned: Vec<Planned> = Vec::new();
    let mut filled: HashSet<usize> = HashSet::new();
    for c in &open {
        let Some(purpose) = purpose(c.field) else {
            continue;
        };
        let found = sources.iter().find_map(|s| {
            if purpose.secrecy == Secrecy::Card && !s.cards {
                return None;
            }
            value_for(s, purpose).map(|v| (s.name, v))
        });
        if let Some((from, value)) = found {
            // A single-line input drops line breaks: an address's lines are joined instead.
            let value = if c.field.tag == "textarea" {
                value
            } else {
                one_line(&value)
            };
            filled.insert(c.id);
            planned.push(Planned {
                field: c.id,
                value,
                from: from.to_owned(),
            });
        }
    }
    // Free labels ("Membership number") by the matcher, over what is still open.
    for source in sources {
        let rest: Vec<Candidate<'_>> = open
            .iter()
            .filter(|c| !filled.contains(&c.id))
            .map(|c| **c)
            .collect();
        if rest.is_empty() {
            break;
        }
        let keys: Vec<&str> = source
            .values
            .iter()
            .filter(|(k, v)| purpose_of_token(k).is_none() && !v.trim().is_empty())
            .map(|(k, _)| k.as_str())
            .filter(|k| !names_a_secret(k))
            .collect();
        for a in match_keys(&keys, &rest).assigned {
            if let Some(value) = source.values.get(&a.key) {
                filled.insert(a.field);
                planned.push(Planned {
                    field: a.field,
                    value: value.clone(),
                    from: source.name.to_owned(),
                });
            }
        }
    }
    planned.sort_by_key(|p| p.field);
    planned
}

/// Text of several lines on one: `12 Main St\nFlat 3` → `12 Main St, Flat 3`.
fn one_line(text: &str) -> String {
    if !text.contains('\n') {
        return text.to_owned();
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// True when a profile key names a secret: a secret's autofill name (`current-password`,
/// `one-time-code`, `cc-csc`, …) or one of its labels ("Passwort", "CVV").
pub(crate) fn is_secret_key(key: &str) -> bool {
    purpose_of_token(&key.to_ascii_lowercase()).is_some_and(|p| p.secrecy == Secrecy::Never)
        || names_a_secret(key)
}

/// True when a profile key holds a card number (`cc-number` or one of its labels).
pub(crate) fn is_card_number_key(key: &str) -> bool {
    let form = spelled(key);
    key.eq_ignore_ascii_case("cc-number")
        || purpose_of_token("cc-number").is_some_and(|p| p.names.contains(&form.as_str()))
}

/// True when a free label is one of the secrets' names ("Passwort", "CVV").
fn names_a_secret(label: &str) -> bool {
    let form = spelled(label);
    PURPOSES
        .iter()
        .filter(|p| p.secrecy == Secrecy::Never)
        .any(|p| p.names.contains(&form.as_str()))
}

#[cfg(test)]
mod tests {
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
        let corpus = include_str!("../tests/autofill-labels.tsv");
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
}
