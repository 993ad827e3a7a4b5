//! AWS Signature Version 4 for S3-style GETs (header-based auth), over `sha2` + `hmac`.
//!
//! Checked against the "GET Object" example of the AWS S3 documentation
//! ("Signature Calculations for the Authorization Header: Transferring Payload in a Single
//! Chunk", docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html).

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// SHA-256 of the empty payload (every GET).
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Credentials and scope.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub access_key: String,
    pub secret_key: String,
    pub session_token: Option<String>,
    pub region: String,
}

use wikantik_serve::format::hashing::to_hex as hex;

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// URI-encode per SigV4: unreserved characters stay, `/` stays when `keep_slash`.
pub fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `YYYYMMDD'T'HHMMSS'Z'` for seconds since the Unix epoch.
pub fn amz_date(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    let (y, m, d) = wikantik_serve::format::dates::civil_from_days(days);
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The headers to send with a signed GET of `path` (already URI-encoded, starting with `/`)
/// on `host`: `x-amz-date`, `x-amz-content-sha256`, optional `x-amz-security-token`, and
/// `authorization`. `extra` are further headers to sign (lower-case names), e.g. `range`.
pub fn sign_get(creds: &Credentials, host: &str, path: &str, extra: &[(&str, &str)], amz_date: &str) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = vec![
        ("host".into(), host.to_string()),
        ("x-amz-content-sha256".into(), EMPTY_SHA256.into()),
        ("x-amz-date".into(), amz_date.to_string()),
    ];
    if let Some(token) = &creds.session_token {
        headers.push(("x-amz-security-token".into(), token.clone()));
    }
    for (k, v) in extra {
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let canonical = format!("GET\n{path}\n\n{canonical_headers}\n{signed}\n{EMPTY_SHA256}");
    let date = &amz_date[..8];
    let scope = format!("{date}/{}/s3/aws4_request", creds.region);
    let to_sign = format!("AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}", hex(&Sha256::digest(canonical.as_bytes())));
    let k_date = hmac(format!("AWS4{}", creds.secret_key).as_bytes(), date);
    let k_region = hmac(&k_date, &creds.region);
    let k_service = hmac(&k_region, "s3");
    let k_signing = hmac(&k_service, "aws4_request");
    let signature = hex(&hmac(&k_signing, &to_sign));
    let authorization =
        format!("AWS4-HMAC-SHA256 Credential={}/{scope},SignedHeaders={signed},Signature={signature}", creds.access_key);
    let mut out: Vec<(String, String)> = headers.into_iter().filter(|(k, _)| k != "host").collect();
    out.push(("authorization".into(), authorization));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS docs, "Example: GET Object": GET /test.txt from examplebucket with Range bytes=0-9.
    #[test]
    fn matches_the_aws_documentation_example() {
        let creds = Credentials {
            access_key: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
            region: "us-east-1".into(),
        };
        let headers = sign_get(&creds, "examplebucket.s3.amazonaws.com", "/test.txt", &[("range", "bytes=0-9")], "20130524T000000Z");
        let auth = &headers.iter().find(|(k, _)| k == "authorization").unwrap().1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,\
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,\
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn formats_dates_and_encodes_paths() {
        assert_eq!(amz_date(1_369_353_600), "20130524T000000Z");
        assert_eq!(amz_date(0), "19700101T000000Z");
        assert_eq!(amz_date(1_764_374_400 + 3661), "20251129T010101Z");
        assert_eq!(uri_encode("/a b/c~d+e", true), "/a%20b/c~d%2Be");
        assert_eq!(uri_encode("a/b", false), "a%2Fb");
    }
}
