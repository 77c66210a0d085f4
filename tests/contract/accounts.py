"""Creates the contract tier's callers through the API and prints `ROLE TOKEN` lines:
a user, a setter, an admin (the one `up` created) and a spare admin for the operations
that end their caller's own powers."""

import json
import sys
import urllib.request

BASE, ADMIN_PASSWORD = sys.argv[1], sys.argv[2]
PASSWORD = "contract-password-1"


def call(method, path, body=None, token=None):
    request = urllib.request.Request(BASE + path, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", "Bearer " + token)
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(request, data) as response:
        text = response.read()
        return json.loads(text) if text else None


def login(username, password):
    return call("POST", "/api/v1/auth/login", {"username": username, "password": password})


admin = login("admin", ADMIN_PASSWORD)["access_token"]
tokens = {"admin": admin}
for name, role in [("user", "user"), ("setter", "setter"), ("spare", "admin")]:
    username = "contract-" + name
    call("POST", "/api/v1/auth/register", {"username": username, "password": PASSWORD})
    account = login(username, PASSWORD)["account"]
    if role != "user":
        call("PUT", f"/api/v1/admin/users/{account['id']}/role", {"role": role}, admin)
    # A role change ends the account's earlier sessions: log in again.
    tokens[name] = login(username, PASSWORD)["access_token"]
for name, token in tokens.items():
    print(name, token)
