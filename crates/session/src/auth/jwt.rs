//! Signed JWTs for sign-in: private-key JWT client assertions (RFC 7523
//! §2.2) and DPoP proofs (RFC 9449), with the public key as a JWK
//! (RFC 7517) and its thumbprint (RFC 7638).
//!
//! The signatures come from `ring`, which elicit already builds for
//! rustls: ECDSA P-256 / P-384 with fixed-length `r || s` signatures (the
//! JWS form, RFC 7518 §3.4) and RSA PKCS#1 v1.5 with SHA-256. PEM files are
//! read with `rustls-pki-types` (also already in the tree). Nothing here
//! prints a key: errors name the file and the problem only.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, KeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING,
    ECDSA_P384_SHA384_FIXED_SIGNING, RSA_PKCS1_SHA256,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::PrivateKeyDer;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A private key elicit signs JWTs with.
pub struct SigningKey {
    inner: Inner,
    rng: SystemRandom,
}

enum Inner {
    /// P-256 (`ES256`) or P-384 (`ES384`).
    Ec { pair: EcdsaKeyPair, p384: bool },
    /// `RS256`.
    Rsa(RsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({}, <redacted>)", self.alg())
    }
}

/// base64url without padding (RFC 7515 §2).
pub(crate) fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A DER TLV with a definite length.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else if n < 0x100 {
        out.extend_from_slice(&[0x81, n as u8]);
    } else {
        out.extend_from_slice(&[0x82, (n >> 8) as u8, n as u8]);
    }
    out.extend_from_slice(content);
    out
}

const OID_EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

/// A SEC1 `EC PRIVATE KEY` (what `openssl ecparam -genkey` writes) as the
/// PKCS#8 document ring reads, for one curve.
fn sec1_to_pkcs8(sec1: &[u8], curve_oid: &[u8]) -> Vec<u8> {
    let alg = der(0x30, &[OID_EC_PUBLIC_KEY, curve_oid].concat());
    let body = [&[0x02, 0x01, 0x00][..], &alg, &der(0x04, sec1)].concat();
    der(0x30, &body)
}

impl SigningKey {
    /// Reads a PEM private key: PKCS#8 (`PRIVATE KEY`: EC P-256, EC P-384
    /// or RSA), SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`). The
    /// error says what was wrong, never what the file holds.
    pub(crate) fn from_pem(pem: &[u8]) -> Result<SigningKey, String> {
        let key = PrivateKeyDer::from_pem_slice(pem).map_err(|_| {
            "not a PEM private key (expected -----BEGIN PRIVATE KEY-----, EC PRIVATE KEY or RSA PRIVATE KEY; encrypted keys are not read)".to_string()
        })?;
        let rng = SystemRandom::new();
        let ec = |der: &[u8]| {
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
                .map(|pair| Inner::Ec { pair, p384: false })
                .or_else(|_| {
                    EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, der, &rng)
                        .map(|pair| Inner::Ec { pair, p384: true })
                })
        };
        let inner = match &key {
            PrivateKeyDer::Pkcs8(k) => {
                let der = k.secret_pkcs8_der();
                ec(der)
                    .or_else(|_| RsaKeyPair::from_pkcs8(der).map(Inner::Rsa))
                    .map_err(|e| {
                        format!("the PKCS#8 key is neither an EC P-256/P-384 key (with its public key) nor an RSA key of 2048 bits or more ({e})")
                    })?
            }
            PrivateKeyDer::Sec1(k) => {
                let der = k.secret_sec1_der();
                ec(&sec1_to_pkcs8(der, OID_P256))
                    .or_else(|_| ec(&sec1_to_pkcs8(der, OID_P384)))
                    .map_err(|e| {
                        format!("the EC key is not a P-256 or P-384 key with its public key ({e})")
                    })?
            }
            PrivateKeyDer::Pkcs1(k) => {
                RsaKeyPair::from_der(k.secret_pkcs1_der())
                    .map(Inner::Rsa)
                    .map_err(|e| format!("the RSA key cannot be used ({e}; 2048 bits or more)"))?
            }
            _ => return Err("an unsupported kind of private key".into()),
        };
        Ok(SigningKey { inner, rng })
    }

    /// A fresh P-256 key, and its PKCS#8 document (to keep in the store).
    pub fn generate_es256() -> Result<(SigningKey, Vec<u8>), String> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| "cannot generate a P-256 key".to_string())?;
        let key = Self::from_es256_pkcs8(doc.as_ref())?;
        Ok((key, doc.as_ref().to_vec()))
    }

    /// A P-256 key from its PKCS#8 document (as [`Self::generate_es256`]
    /// made it).
    pub(crate) fn from_es256_pkcs8(der: &[u8]) -> Result<SigningKey, String> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(|e| format!("not a P-256 key ({e})"))?;
        Ok(SigningKey {
            inner: Inner::Ec { pair, p384: false },
            rng,
        })
    }

    /// The JWS `alg`.
    pub fn alg(&self) -> &'static str {
        match &self.inner {
            Inner::Ec { p384: false, .. } => "ES256",
            Inner::Ec { p384: true, .. } => "ES384",
            Inner::Rsa(_) => "RS256",
        }
    }

    /// The public key as a JWK with only its required members, in the
    /// lexicographic order RFC 7638 hashes.
    pub(crate) fn public_jwk(&self) -> Value {
        match &self.inner {
            Inner::Ec { pair, p384 } => {
                // Uncompressed point: 0x04 || x || y.
                let point = pair.public_key().as_ref();
                let n = (point.len() - 1) / 2;
                json!({
                    "crv": if *p384 { "P-384" } else { "P-256" },
                    "kty": "EC",
                    "x": b64(&point[1..1 + n]),
                    "y": b64(&point[1 + n..]),
                })
            }
            Inner::Rsa(pair) => {
                let public = ring::rsa::PublicKeyComponents::<Vec<u8>>::from(pair.public());
                let trim = |b: &[u8]| {
                    let first = b.iter().position(|x| *x != 0).unwrap_or(b.len());
                    b64(&b[first..])
                };
                json!({
                    "e": trim(&public.e),
                    "kty": "RSA",
                    "n": trim(&public.n),
                })
            }
        }
    }

    /// The JWK SHA-256 thumbprint (RFC 7638), base64url.
    pub fn thumbprint(&self) -> String {
        // serde_json (with preserve_order) keeps the members in the order
        // written above: the canonical one.
        let canonical = serde_json::to_string(&self.public_jwk()).unwrap_or_default();
        b64(&Sha256::digest(canonical.as_bytes()))
    }

    /// A compact JWS of `claims` with `header` (whose `alg` is set here).
    pub fn sign(&self, mut header: Value, claims: &Value) -> Result<String, String> {
        header["alg"] = json!(self.alg());
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let signature = match &self.inner {
            Inner::Ec { pair, .. } => pair
                .sign(&self.rng, input.as_bytes())
                .map_err(|_| "signing failed".to_string())?
                .as_ref()
                .to_vec(),
            Inner::Rsa(pair) => {
                let mut out = vec![0u8; pair.public().modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &self.rng, input.as_bytes(), &mut out)
                    .map_err(|_| "signing failed".to_string())?;
                out
            }
        };
        Ok(format!("{input}.{}", b64(&signature)))
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    super::store::now()
}

/// The claims of a compact JWT, unverified (for reading `exp` of an
/// assertion elicit was handed, to say it expired before sending it).
pub(crate) fn unverified_claims(jwt: &str) -> Option<Value> {
    let mut parts = jwt.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_key_signs_and_has_a_p256_jwk() {
        let (key, pkcs8) = SigningKey::generate_es256().unwrap();
        assert_eq!(key.alg(), "ES256");
        let jwk = key.public_jwk();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["x"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
        let again = SigningKey::from_es256_pkcs8(&pkcs8).unwrap();
        assert_eq!(again.thumbprint(), key.thumbprint());
        let jws = key.sign(json!({"typ": "JWT"}), &json!({"a": 1})).unwrap();
        let parts: Vec<&str> = jws.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(URL_SAFE_NO_PAD.decode(parts[2]).unwrap().len(), 64);
        assert_eq!(unverified_claims(&jws).unwrap()["a"], 1);
    }

    #[test]
    fn garbage_pem_is_a_clear_error() {
        for text in [
            "",
            "hello",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        ] {
            let e = SigningKey::from_pem(text.as_bytes()).unwrap_err();
            assert!(!e.is_empty());
        }
        assert!(unverified_claims("a.b").is_none());
        assert!(unverified_claims("a.!!.c").is_none());
    }
}
