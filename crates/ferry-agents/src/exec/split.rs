//! Splitting a command line into argv the way a POSIX shell splits words, and nothing more:
//! quotes and backslashes group and escape, but nothing is expanded (`$HOME`, `*`, `~` and
//! backticks stay as written), so `ferry serve --exec 'tool --name "a b"'` means what it
//! reads as without a shell ever running.

use super::ExecError;

/// Splits `line` into words.
///
/// - Unquoted blanks (space, tab, line break) separate words.
/// - `'…'` is literal: no escapes inside.
/// - `"…"` is literal except that a backslash escapes `"`, `\`, `$` and `` ` `` (POSIX);
///   before anything else the backslash stays.
/// - An unquoted backslash escapes the next character; backslash-newline joins lines.
/// - `""` and `''` make an empty word.
pub(crate) fn split_command_line(line: &str) -> Result<Vec<String>, ExecError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // True once the current word has begun (a quote begins a word even if it stays empty).
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(ExecError::UnterminatedQuote { quote: '\'' }),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(ExecError::UnterminatedQuote { quote: '"' }),
                        },
                        Some(c) => word.push(c),
                        None => return Err(ExecError::UnterminatedQuote { quote: '"' }),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err(ExecError::TrailingBackslash),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_command_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    #[test]
    fn blanks_separate_words() {
        assert_eq!(split("  tool  -v\targ\n"), ["tool", "-v", "arg"]);
        assert!(split("").is_empty());
        assert!(split(" \t ").is_empty());
    }

    #[test]
    fn quotes_group_and_may_be_empty() {
        assert_eq!(
            split(r#"tool 'a b' "c d" e'f g'h "" ''"#),
            ["tool", "a b", "c d", "ef gh", "", ""]
        );
    }

    #[test]
    fn single_quotes_take_backslashes_literally() {
        assert_eq!(split(r"echo 'a\nb\'"), ["echo", r"a\nb\"]);
    }

    #[test]
    fn double_quotes_escape_only_what_posix_says() {
        assert_eq!(
            split(r#"echo "a \"q\" \\ \$x \` \n""#),
            ["echo", r#"a "q" \ $x ` \n"#]
        );
    }

    #[test]
    fn unquoted_backslash_escapes_the_next_character() {
        assert_eq!(split(r"echo a\ b \'c\' \\"), ["echo", "a b", "'c'", r"\"]);
        assert_eq!(split("echo a\\\nb"), ["echo", "ab"]);
    }

    #[test]
    fn nothing_is_expanded() {
        assert_eq!(
            split("echo $HOME ~ * `id` $(id)"),
            ["echo", "$HOME", "~", "*", "`id`", "$(id)"]
        );
    }

    #[test]
    fn unterminated_quotes_and_trailing_backslash_are_errors() {
        assert_eq!(
            split_command_line("echo 'a"),
            Err(ExecError::UnterminatedQuote { quote: '\'' })
        );
        assert_eq!(
            split_command_line(r#"echo "a"#),
            Err(ExecError::UnterminatedQuote { quote: '"' })
        );
        assert_eq!(
            split_command_line(r#"echo "a\"#),
            Err(ExecError::UnterminatedQuote { quote: '"' })
        );
        assert_eq!(
            split_command_line(r"echo a\"),
            Err(ExecError::TrailingBackslash)
        );
    }
}
