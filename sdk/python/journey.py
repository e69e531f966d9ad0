"""A short journey through the API with the client openapi-python-client generates
(default configuration) from the live document, as an integrating team would write it.

Usage: python journey.py BASE_URL ADMIN_CLIENT_ID ADMIN_CLIENT_SECRET, with the generated
package `consular_services_api_client` importable (scripts/sdk-check.sh puts it on
PYTHONPATH). Every call goes through the generated functions and models; every answer is
checked (status and fields), and the first failed check exits non-zero with the response.

Request bodies are built with the models' `from_dict`, from the JSON the API documents, so
that a field the document types as an enum, a date or a UUID is converted by the
generated code itself.
"""

import datetime
import hashlib
import io
import sys
import typing
import uuid
from http import HTTPStatus

import httpx
from consular_services_api_client import AuthenticatedClient, Client
from consular_services_api_client.api.appointments import book_appointment, list_slots, submit_slots
from consular_services_api_client.api.auth import create_token
from consular_services_api_client.api.citizens import register_citizen
from consular_services_api_client.api.documents import upload_document
from consular_services_api_client.api.missions import create_mission
from consular_services_api_client.api.requests import cancel_request, list_requests, submit_request
from consular_services_api_client.api.services import create_service
from consular_services_api_client.models import (
    AppointmentBody,
    BookAppointment,
    CancelRequest,
    CitizenBody,
    ClientCredentialsForm,
    CreateMission,
    CreateServiceType,
    DocumentBody,
    MissionBody,
    Problem,
    RegisterCitizen,
    RequestBody,
    RequestList,
    ServiceTypeBody,
    SlotList,
    SlotReportBody,
    SubmitRequest,
    SubmitSlots,
    TokenResponse,
    UploadDocumentForm,
)
from consular_services_api_client.types import File, Response

NAME = "python"
# A minimal PDF: the server decides the type from the bytes (docs/documents.md).
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"


# Every request the authenticated clients sent (httpx's request hook), to check the wire form.
SENT: list[httpx.Request] = []


class JourneyFailed(Exception):
    pass


def check(condition: bool, what: str, response: Response | None = None) -> None:
    if condition:
        return
    detail = ""
    if response is not None:
        detail = f"\n  HTTP {int(response.status_code)}: {response.content[:2000].decode(errors='replace')}"
    raise JourneyFailed(f"{what}{detail}")


def expect(response: Response, status: HTTPStatus, what: str, model: type):
    """The response has `status` and parsed into the generated `model`; returns it."""
    check(response.status_code == status, f"{what}: expected {int(status)}", response)
    check(isinstance(response.parsed, model), f"{what}: the body did not parse into {model.__name__}", response)
    print(f"{NAME}: {what}: {int(response.status_code)}")
    return response.parsed


def token(base_url: str, client_id: str, client_secret: str) -> AuthenticatedClient:
    """The client credentials grant, the credentials in the form (client_secret_post)."""
    form = ClientCredentialsForm.from_dict(
        {"grant_type": "client_credentials", "client_id": client_id, "client_secret": client_secret}
    )
    response = create_token.sync_detailed(client=Client(base_url=base_url), body=form)
    parsed = expect(response, HTTPStatus.OK, "token", TokenResponse)
    check(parsed.token_type.lower() == "bearer", f"token_type is {parsed.token_type!r}", response)
    check(bool(parsed.access_token), "an empty access_token", response)
    return AuthenticatedClient(
        base_url=base_url, token=parsed.access_token, httpx_args={"event_hooks": {"request": [SENT.append]}}
    )


def journey(base_url: str, admin_id: str, admin_secret: str) -> None:
    admin = token(base_url, admin_id, admin_secret)

    # Setup, as the README walk-through does: a mission, a service type, a citizen with
    # their own API client.
    mission = expect(
        create_mission.sync_detailed(
            client=admin,
            body=CreateMission.from_dict(
                {
                    "code": f"fr-sdk-{NAME}",
                    "name": f"SDK check ({NAME})",
                    "country": "FR",
                    "city": "Paris",
                    "timezone": "Europe/Paris",
                }
            ),
        ),
        HTTPStatus.CREATED,
        "create mission",
        MissionBody,
    )
    service = expect(
        create_service.sync_detailed(
            client=admin,
            body=CreateServiceType.from_dict(
                {
                    "code": f"sdk_{NAME}_passport",
                    "name": "Passport renewal",
                    "fee": {"amount_minor": 8600, "currency": "EUR"},
                    "sla_days": 21,
                    "required_documents": ["passport_photo"],
                    "stages": [{"name": "Document check"}, {"name": "Printing"}],
                }
            ),
        ),
        HTTPStatus.CREATED,
        "create service type",
        ServiceTypeBody,
    )
    citizen = expect(
        register_citizen.sync_detailed(
            client=admin,
            body=RegisterCitizen.from_dict(
                {
                    "mission_id": str(mission.id),
                    "given_name": "Alice",
                    "family_name": "Martin",
                    "date_of_birth": "1990-04-12",
                    "place_of_birth": "Lyon",
                    "nationality": "FR",
                    "passport_number": "19AB12345",
                    "passport_expiry": "2031-04-11",
                    "email": f"alice.{NAME}@example.org",
                    "phone": "+33612345678",
                    "address": {"line1": "1 Main Street", "city": "Paris", "country": "FR"},
                    "preferred_language": "fr",
                    "issue_client": True,
                }
            ),
        ),
        HTTPStatus.CREATED,
        "register citizen",
        CitizenBody,
    )
    issued = citizen.client
    check(bool(issued) and bool(issued.client_secret), "the citizen's client and its secret are in the answer")
    alice = token(base_url, issued.client_id, issued.client_secret)

    # Two requests; the second is cancelled, so that a two-valued filter has something
    # to tell apart.
    kept = expect(
        submit_request.sync_detailed(client=alice, body=SubmitRequest.from_dict({"service_type_id": str(service.id)})),
        HTTPStatus.CREATED,
        "submit request",
        RequestBody,
    )
    check(str(kept.status) == "submitted", f"a new request is submitted, not {kept.status}")
    second = submit_request.sync_detailed(
        client=alice, body=SubmitRequest.from_dict({"service_type_id": str(service.id)})
    )
    dropped = expect(second, HTTPStatus.CREATED, "submit a second request", RequestBody)
    cancelled = expect(
        cancel_request.sync_detailed(
            dropped.id,
            client=alice,
            body=CancelRequest.from_dict({"reason": "submitted twice"}),
            if_match=second.headers.get("etag"),
        ),
        HTTPStatus.OK,
        "cancel the second request",
        RequestBody,
    )
    check(str(cancelled.status) == "cancelled", f"the cancelled request is {cancelled.status}")

    # Upload: multipart/form-data through the generated function, with the parts in the
    # order the generator writes them (it puts `file` first).
    upload = upload_document.sync_detailed(
        client=alice,
        body=UploadDocumentForm(
            file=File(payload=io.BytesIO(PDF), file_name="passport-photo.pdf", mime_type="application/pdf"),
            kind="passport_photo",
            request_id=kept.id,
        ),
    )
    document = expect(upload, HTTPStatus.CREATED, "upload document", DocumentBody)
    check(document.kind == "passport_photo", f"the document's kind is {document.kind!r}", upload)
    check(document.request_id == kept.id, "the document is attached to the request", upload)
    check(str(document.media_type) == "application/pdf", f"media_type {document.media_type!r}", upload)
    check(document.size_bytes == len(PDF), f"size_bytes {document.size_bytes}", upload)
    check(document.sha256 == hashlib.sha256(PDF).hexdigest(), "sha256 of the stored bytes", upload)

    # A two-valued filter: the generated client sends `status=submitted&status=in_review`
    # (and this journey's service type, as the other journey runs on the same server).
    status_enum = list_status_enum()

    def listed_with(*statuses: str) -> RequestList:
        return expect(
            list_requests.sync_detailed(
                client=admin, service_type_id=service.id, status=[status_enum(s) for s in statuses]
            ),
            HTTPStatus.OK,
            "list requests with " + "&".join(f"status={s}" for s in statuses),
            RequestList,
        )

    listed = listed_with("submitted", "in_review")
    query = SENT[-1].url.query.decode()
    check("status=submitted&status=in_review" in query, f"the filter's wire form: {query}")
    check([item.id for item in listed.items] == [kept.id], f"only the open request: {[i.id for i in listed.items]}")
    listed = listed_with("submitted", "cancelled")
    check({item.id for item in listed.items} == {kept.id, dropped.id}, "both requests")

    # Booking: the admin opens a slot in ten days (mission local time); the citizen finds
    # it and books it for the request.
    day = (datetime.date.today() + datetime.timedelta(days=10)).isoformat()
    report = expect(
        submit_slots.sync_detailed(
            client=admin,
            body=SubmitSlots.from_dict(
                {
                    "mission_id": str(mission.id),
                    "slots": [
                        {
                            "starts_at": f"{day}T09:00",
                            "minutes": 30,
                            "capacity": 1,
                            "service_type_ids": [str(service.id)],
                        }
                    ],
                }
            ),
        ),
        HTTPStatus.OK,
        "open a slot",
        SlotReportBody,
    )
    check(report.created == 1, f"one slot created, not {report.created}")
    slots = expect(
        list_slots.sync_detailed(client=alice, mission_id=mission.id, service_type_id=service.id),
        HTTPStatus.OK,
        "list slots",
        SlotList,
    )
    check(len(slots.items) == 1, f"one open slot, not {len(slots.items)}")
    booking = book_appointment.sync_detailed(
        client=alice,
        body=BookAppointment.from_dict(
            {"slot_id": str(slots.items[0].id), "service_type_id": str(service.id), "request_id": str(kept.id)}
        ),
        idempotency_key=f"sdk-{NAME}-{uuid.uuid4()}",
    )
    appointment = expect(booking, HTTPStatus.CREATED, "book appointment", AppointmentBody)
    check(str(appointment.status) == "booked", f"the appointment is {appointment.status}", booking)
    check(appointment.slot_id == slots.items[0].id, "booked in the slot listed", booking)

    # A call that fails: its problem response parses into the generated Problem type.
    refused = create_mission.sync_detailed(
        client=admin,
        body=CreateMission.from_dict(
            {"code": "Not A Code", "name": "x", "country": "FR", "city": "Paris", "timezone": "Europe/Paris"}
        ),
    )
    problem = expect(refused, HTTPStatus.UNPROCESSABLE_ENTITY, "create mission with a bad code (a problem)", Problem)
    check(problem.type_ == "/problems/validation-failed", f"problem type {problem.type_!r}", refused)
    check(problem.status == 422, f"problem status {problem.status}", refused)
    check(problem.code == "validation_failed", f"problem code {problem.code!r}", refused)
    check(
        isinstance(problem.errors, list) and any(error.pointer == "/code" for error in problem.errors),
        "the problem lists the failing field /code",
        refused,
    )


def list_status_enum():
    """The enum the generated `list_requests` takes for `status` items, found from its
    signature, so that the journey does not depend on the name the generator gives it."""
    hint = typing.get_type_hints(list_requests.sync_detailed)["status"]
    for arm in typing.get_args(hint):
        if typing.get_origin(arm) is list:
            (item,) = typing.get_args(arm)
            return item
    raise JourneyFailed(f"list_requests' status parameter is not a list: {hint}")


def main() -> int:
    if len(sys.argv) != 4:
        print("usage: journey.py BASE_URL ADMIN_CLIENT_ID ADMIN_CLIENT_SECRET", file=sys.stderr)
        return 2
    try:
        journey(*sys.argv[1:])
    except JourneyFailed as failure:
        print(f"{NAME} journey FAILED: {failure}", file=sys.stderr)
        return 1
    print(f"{NAME} journey: all steps passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
