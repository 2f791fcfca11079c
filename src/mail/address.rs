//! Which addresses mail can be sent to: the one check every address passes before it is stored,
//! so that no mail is written for an address the mailer would refuse, or one a mail program
//! would read as something else.
//!
//! An address is plain ASCII: a dot-atom before the `@` (RFC 5322's `atext` but `?`, and single
//! dots: no quoted strings, no comments, no angle brackets or commas that would make it a list or
//! a display name), a host name after it (letters, digits and inner hyphens, labels of at most 63
//! characters, at least one dot), nothing that reads as an RFC 2047 encoded word (`=?`), which
//! a decoding mail pipeline would turn into other characters, line breaks among them. Last,
//! lettre, which sends the mail, must read it too.

use std::str::FromStr;

/// The longest address (RFC 5321's path limit, less the angle brackets).
pub const MAX_ADDRESS: usize = 254;
/// The longest part before the `@` (RFC 5321).
pub const MAX_LOCAL_PART: usize = 64;
/// The longest label of a host name (RFC 1035).
pub const MAX_LABEL: usize = 63;

/// The pattern `openapi.yaml` gives addresses: the same rules as [`check_address`] but the length
/// of the part before the `@` (at most 64, in the description's words) and lettre's own reading.
/// No lookaround, so that every JSON Schema reader, and the generators that make examples from
/// it, take it as it is; `?` is left out of the name before the `@` (RFC 5322 allows it, nobody
/// uses it), which keeps `=?` out without a lookahead.
pub const ADDRESS_PATTERN: &str = r"^[A-Za-z0-9!#$%&'*+/=^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$";

/// Whether mail can go to `address` (already trimmed); the reason when it cannot.
pub fn check_address(address: &str) -> Result<(), String> {
    if address.len() > MAX_ADDRESS {
        return Err(format!("an address has at most {MAX_ADDRESS} characters"));
    }
    if let Some(c) = address.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(if c.is_ascii() {
            "an address holds no spaces or control characters".to_owned()
        } else {
            format!("an address is plain ASCII; `{}` is not", c.escape_unicode())
        });
    }
    if address.contains("=?") {
        return Err("`=?` starts an encoded word, which mail programs decode into other characters; it cannot be part of an address".to_owned());
    }
    let (local, domain) = address
        .split_once('@')
        .ok_or("an address has one `@`, between a name and a domain")?;
    if domain.contains('@') {
        return Err("an address has one `@`".to_owned());
    }
    check_local_part(local)?;
    check_domain(domain)?;
    lettre::Address::from_str(address)
        .map(drop)
        .map_err(|e| format!("the mailer cannot send to it: {e}"))
}

fn check_local_part(local: &str) -> Result<(), String> {
    if local.is_empty() || local.len() > MAX_LOCAL_PART {
        return Err(format!(
            "the name before the `@` has 1 to {MAX_LOCAL_PART} characters"
        ));
    }
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+/=^_`{|}~-".contains(c);
    if local
        .split('.')
        .any(|atom| atom.is_empty() || !atom.chars().all(atext))
    {
        return Err(
            "the name before the `@` is letters, digits and `!#$%&'*+/=^_`{|}~-`, with single dots between them (no quotes, question marks, spaces, commas or angle brackets)".to_owned(),
        );
    }
    Ok(())
}

fn check_domain(domain: &str) -> Result<(), String> {
    if !domain.contains('.') {
        return Err("the domain after the `@` has a dot, like example.org".to_owned());
    }
    for label in domain.split('.') {
        if label.is_empty() || label.len() > MAX_LABEL {
            return Err(format!(
                "each part of the domain between dots has 1 to {MAX_LABEL} characters"
            ));
        }
        if !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            || label.starts_with('-')
            || label.ends_with('-')
        {
            return Err("the domain is letters, digits and inner hyphens between dots".to_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The addresses a probe got stored (mails to them failed for good), and others like them.
    const REFUSED: [&str; 15] = [
        "<eve@example.org>",
        "Eve<eve@example.org>",
        "\"a,b\"@example.org",
        "=?utf-8?q?x=0D=0ABcc=3Aeve?=@example.org",
        "eve@=?utf-8?q?example?=.org",
        "ève@example.org",
        "eve\u{202e}gro.elpmaxe@example.org",
        "eve@exa\u{200b}mple.org",
        "a b@example.org",
        "eve@localhost",
        "eve@-example.org",
        "eve@example..org",
        ".eve@example.org",
        "eve,mallory@example.org",
        "who?@example.org",
    ];

    #[test]
    fn what_the_mailer_cannot_send_to_is_refused_with_its_reason() {
        for address in REFUSED {
            let refused = check_address(address);
            assert!(refused.is_err(), "{address} was accepted");
        }
        let long_label = format!("eve@{}.org", "a".repeat(64));
        assert!(check_address(&long_label).unwrap_err().contains("63"));
        let long_local = format!("{}@example.org", "e".repeat(65));
        assert!(check_address(&long_local).unwrap_err().contains("64"));
        assert!(
            check_address("=?x?=@example.org")
                .unwrap_err()
                .contains("encoded word")
        );
    }

    #[test]
    fn ordinary_addresses_pass_and_the_pattern_agrees() {
        let pattern = regex_lite(ADDRESS_PATTERN);
        for address in [
            "alice@example.org",
            "a.b+tag@sub.example.co.uk",
            "o'neil@example.ie",
            "x_y-z@a-b.example",
            "1234@192-168.example.net",
        ] {
            check_address(address).unwrap();
            assert!(pattern(address), "{address}");
        }
        for address in REFUSED {
            assert!(!pattern(address), "the pattern takes {address}");
        }
    }

    /// The description's pattern, read as JSON Schema readers read it (ECMA-262 syntax).
    fn regex_lite(pattern: &str) -> impl Fn(&str) -> bool {
        let compiled = fancy_regex::Regex::new(pattern).unwrap();
        move |text| compiled.is_match(text).unwrap()
    }
}
