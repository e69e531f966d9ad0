"""Schemathesis hooks for the consular API.

Every generated request gets a freshly issued admin access token. The run exercises
`POST /api/v1/auth/revoke`, which revokes the bearer token it is called with; a single
shared token would be revoked early and every later request would test nothing but 401.
"""

import base64
import json
import os
import urllib.request

import schemathesis

TOKEN_URL = os.environ["CONSULAR_ST_BASE_URL"] + "/api/v1/auth/token"
BASIC = base64.b64encode(
    f"{os.environ['CONSULAR_ST_CLIENT_ID']}:{os.environ['CONSULAR_ST_CLIENT_SECRET']}".encode()
).decode()


@schemathesis.auth(refresh_interval=None)
class FreshAdminToken:
    def get(self, case, ctx):
        request = urllib.request.Request(
            TOKEN_URL,
            data=b"grant_type=client_credentials",
            headers={
                "Authorization": f"Basic {BASIC}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["access_token"]

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
