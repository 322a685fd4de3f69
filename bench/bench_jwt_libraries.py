"""Which JWT library ``janito mcp serve`` verifies OAuth access tokens with
(docs/decisions/0017-jwt-verification-with-pyjwt.md): PyJWT, joserfc, Authlib and
python-jose, each installed in one fresh virtual environment.

- Import: the seconds ``python -c "import LIBRARY"`` takes (the names a verifier needs),
  against ``python -c "import cryptography...rsa"`` (every one of them loads it), the
  commands interleaved.
- Verify: the time to check one access token (signature, ``exp``, ``iss``, ``aud``)
  against a public key imported once from its JWK, RS256 (RSA 2048) and ES256 (P-256),
  the four libraries interleaved in one process.

Ratios are to PyJWT (the MCP SDK depends on it, so janito-mcp installs it anyway).
No target: the figures decide a dependency, they guard nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Command, alternate, alternate_calls, load_note, make_venv, timing_env

LIBRARIES = {
    "pyjwt": ("pyjwt[crypto]", "import jwt"),
    "joserfc": ("joserfc", "from joserfc import jwt; from joserfc.jwk import KeySet"),
    "authlib": ("authlib", "from authlib.jose import JsonWebToken, JsonWebKey"),
    "python-jose": ("python-jose[cryptography]", "from jose import jwt"),
}
BASELINE_IMPORT = "import cryptography.hazmat.primitives.asymmetric.rsa"
ISSUER = "https://issuer.example.org"
AUDIENCE = "https://tools.example.org/mcp"


def verifiers(algorithm: str) -> dict[str, object]:
    """One function per library that verifies the same token completely."""
    import jwt as pyjwt
    from authlib.jose import JsonWebKey, JsonWebToken
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from jose import jwt as jose_jwt
    from joserfc import jwt as joserfc_jwt
    from joserfc.jwk import ECKey, RSAKey

    private = (rsa.generate_private_key(public_exponent=65537, key_size=2048)
               if algorithm == "RS256" else ec.generate_private_key(ec.SECP256R1()))
    jwk = json.loads(pyjwt.algorithms.get_default_algorithms()[algorithm].to_jwk(
        private.public_key())) | {"kid": "k1", "alg": algorithm}
    now = int(time.time())
    token = pyjwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "someone", "iat": now,
                          "exp": now + 3600, "scope": "janito:read"}, private,
                         algorithm=algorithm, headers={"kid": "k1"})

    pyjwt_key = pyjwt.PyJWK(jwk)

    def with_pyjwt() -> object:
        return pyjwt.decode(token, pyjwt_key, algorithms=[algorithm], audience=AUDIENCE,
                            issuer=ISSUER, options={"require": ["exp", "iss", "aud"]})

    joserfc_key = (RSAKey if algorithm == "RS256" else ECKey).import_key(jwk)
    rules = joserfc_jwt.JWTClaimsRegistry(iss={"essential": True, "value": ISSUER},
                                          aud={"essential": True, "value": AUDIENCE},
                                          exp={"essential": True})

    def with_joserfc() -> object:
        decoded = joserfc_jwt.decode(token, joserfc_key, algorithms=[algorithm])
        rules.validate(decoded.claims)
        return decoded.claims

    authlib_jwt = JsonWebToken([algorithm])
    authlib_key = JsonWebKey.import_key(jwk)
    options = {"iss": {"essential": True, "value": ISSUER},
               "aud": {"essential": True, "value": AUDIENCE}, "exp": {"essential": True}}

    def with_authlib() -> object:
        claims = authlib_jwt.decode(token, authlib_key, claims_options=options)
        claims.validate()
        return claims

    def with_jose() -> object:
        return jose_jwt.decode(token, jwk, algorithms=[algorithm], audience=AUDIENCE,
                               issuer=ISSUER)

    functions = {"pyjwt": with_pyjwt, "joserfc": with_joserfc, "authlib": with_authlib,
                 "python-jose": with_jose}
    for function in functions.values():
        function()  # each one accepts the token before it is timed
    return functions


def measure_verify(number: int, repeat: int) -> None:
    """In the virtual environment: seconds per verification, printed as JSON."""
    out = {}
    for algorithm in ("RS256", "ES256"):
        timings = alternate_calls(verifiers(algorithm), number, repeat)  # type: ignore[arg-type]
        out[algorithm] = {name: timing.cpu for name, timing in timings.items()}
    print(json.dumps(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="import runs of each command")
    parser.add_argument("--number", type=int, default=300, help="verifications per batch")
    parser.add_argument("--repeat", type=int, default=7, help="batches of each library")
    parser.add_argument("--verify-here", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.verify_here:
        measure_verify(args.number, args.repeat)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        venv = make_venv(Path(scratch) / "venv", *(spec for spec, _ in LIBRARIES.values()))
        python = str(venv / "bin" / "python")
        env = timing_env()
        commands = {"baseline": Command([python, "-c", BASELINE_IMPORT], env)}
        for name, (_, statement) in LIBRARIES.items():
            commands[name] = Command([python, "-c", f"{BASELINE_IMPORT}; {statement}"], env)
        imports = alternate(commands, args.runs)
        versions = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(', '.join(f'{d} '"
             " + m.version(d) for d in ('pyjwt', 'joserfc', 'authlib', 'python-jose',"
             " 'cryptography')))"], capture_output=True, text=True, check=True).stdout.strip()
        done = subprocess.run([python, __file__, "--verify-here", "--number", str(args.number),
                               "--repeat", str(args.repeat)], capture_output=True, text=True,
                              check=True, env=env)
        verify = json.loads(done.stdout.splitlines()[-1])
    print(f"JWT libraries ({versions}); {load_note()}")
    base = imports["baseline"].cpu
    print(f"import, CPU ms above `{BASELINE_IMPORT}` ({base * 1000:.1f} ms), and ratio to PyJWT's:")
    pyjwt_import = imports["pyjwt"].cpu - base
    for name in LIBRARIES:
        extra = imports[name].cpu - base
        print(f"  {name:<12} {extra * 1000:6.1f} ms  {extra / pyjwt_import:5.2f}x")
    for algorithm, seconds in verify.items():
        print(f"verify one {algorithm} token (signature, exp, iss, aud), CPU µs, ratio to PyJWT's:")
        for name in LIBRARIES:
            print(f"  {name:<12} {seconds[name] * 1e6:7.1f} µs  "
                  f"{seconds[name] / seconds['pyjwt']:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
