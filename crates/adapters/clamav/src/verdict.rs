//! clamd's answer to `zINSTREAM`, read strictly: anything but the two known forms is an
//! error, never a clean verdict.

use consular_ports::ScanVerdict;

/// Parses clamd's answer: `stream: OK` is clean, `stream: <signature> FOUND` infected;
/// anything else (`… ERROR`, an empty answer from a closed connection) is an error
/// carrying the answer.
pub fn parse_verdict(answer: &[u8]) -> Result<ScanVerdict, String> {
    let text = String::from_utf8_lossy(answer);
    let text = text.trim_end_matches(['\0', '\n', '\r', ' ']);
    if text.is_empty() {
        return Err("closed the connection without an answer".to_owned());
    }
    match text.strip_prefix("stream: ") {
        Some("OK") => Ok(ScanVerdict::Clean),
        Some(rest) => match rest.strip_suffix(" FOUND") {
            Some(signature) if !signature.trim().is_empty() => {
                Ok(ScanVerdict::Infected { signature: signature.trim().to_owned() })
            }
            _ => Err(format!("unexpected answer {text:?}")),
        },
        None => Err(format!("unexpected answer {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(parse_verdict(b"stream: OK\0"), Ok(ScanVerdict::Clean));
        assert_eq!(
            parse_verdict(b"stream: Eicar-Test-Signature FOUND\0"),
            Ok(ScanVerdict::Infected { signature: "Eicar-Test-Signature".to_owned() })
        );
        for bad in [
            &b""[..],
            b"\0",
            b"INSTREAM size limit exceeded. ERROR\0",
            b"stream: FOUND\0",
            b"stream: lstat() failed ERROR\0",
            b"OK",
        ] {
            assert!(parse_verdict(bad).is_err(), "{bad:?}");
        }
    }
}
