// A short journey through the API with openapi-fetch and the types openapi-typescript
// generates (default options) from the live document, as an integrating team would write
// it; compiled with `tsc --strict`, so that a type the document gets wrong fails the build.
//
// Usage: node build/journey.js BASE_URL ADMIN_CLIENT_ID ADMIN_CLIENT_SECRET, with
// ./schema.d.ts generated beside this file (scripts/sdk-check.sh does both). Every answer
// is checked (status and fields); the first failed check exits non-zero with the response.

import { createHash, randomUUID } from "node:crypto";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Problem = Schemas["Problem"];

const NAME = "typescript";
// A minimal PDF: the server decides the type from the bytes (docs/documents.md).
const PDF = Buffer.from("%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n", "latin1");

class JourneyFailed extends Error {}

function check(condition: boolean, what: string, response?: Response, body?: unknown): asserts condition {
  if (!condition) {
    const detail = response ? `\n  HTTP ${response.status}: ${JSON.stringify(body).slice(0, 2000)}` : "";
    throw new JourneyFailed(`${what}${detail}`);
  }
}

// The response has `status` and a body; returns the body, typed as the document says.
function expect<T>(
  result: { data?: T; error?: unknown; response: Response },
  status: number,
  what: string,
): T {
  const body = result.data ?? result.error;
  check(result.response.status === status, `${what}: expected ${status}`, result.response, body);
  check(result.data !== undefined, `${what}: no body`, result.response, body);
  console.log(`${NAME}: ${what}: ${result.response.status}`);
  return result.data;
}

async function token(baseUrl: string, clientId: string, clientSecret: string): Promise<Client<paths>> {
  // The client credentials grant, the credentials in the form (client_secret_post);
  // openapi-fetch encodes the body as a form for this Content-Type.
  const anonymous = createClient<paths>({ baseUrl });
  const result = await anonymous.POST("/api/v1/auth/token", {
    body: { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret },
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
  });
  const issued: Schemas["TokenResponse"] = expect(result, 200, "token");
  check(issued.token_type.toLowerCase() === "bearer", `token_type is ${issued.token_type}`);
  check(issued.access_token.length > 0, "an empty access_token");
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${issued.access_token}` } });
}

async function journey(baseUrl: string, adminId: string, adminSecret: string): Promise<void> {
  const admin = await token(baseUrl, adminId, adminSecret);

  // Setup, as the README walk-through does: a mission, a service type, a citizen with
  // their own API client.
  const mission = expect(
    await admin.POST("/api/v1/missions", {
      body: { code: `fr-sdk-${NAME}`, name: `SDK check (${NAME})`, country: "FR", city: "Paris", timezone: "Europe/Paris" },
    }),
    201,
    "create mission",
  );
  const service = expect(
    await admin.POST("/api/v1/services", {
      body: {
        code: `sdk_${NAME}_passport`,
        name: "Passport renewal",
        fee: { amount_minor: 8600, currency: "EUR" },
        sla_days: 21,
        required_documents: ["passport_photo"],
        stages: [{ name: "Document check" }, { name: "Printing" }],
      },
    }),
    201,
    "create service type",
  );
  const citizen = expect(
    await admin.POST("/api/v1/citizens", {
      body: {
        mission_id: mission.id,
        given_name: "Alice",
        family_name: "Martin",
        date_of_birth: "1990-04-12",
        place_of_birth: "Lyon",
        nationality: "FR",
        passport_number: "19AB12345",
        passport_expiry: "2031-04-11",
        email: `alice.${NAME}@example.org`,
        phone: "+33612345678",
        address: { line1: "1 Main Street", city: "Paris", country: "FR" },
        preferred_language: "fr",
        issue_client: true,
      },
    }),
    201,
    "register citizen",
  );
  const issued = citizen.client;
  check(issued != null && issued.client_secret != null, "the citizen's client and its secret are in the answer");
  const alice = await token(baseUrl, issued.client_id, issued.client_secret);

  // Two requests; the second is cancelled, so that a two-valued filter has something to
  // tell apart.
  const kept = expect(
    await alice.POST("/api/v1/requests", { body: { service_type_id: service.id } }),
    201,
    "submit request",
  );
  check(kept.status === "submitted", `a new request is submitted, not ${kept.status}`);
  const second = await alice.POST("/api/v1/requests", { body: { service_type_id: service.id } });
  const dropped = expect(second, 201, "submit a second request");
  const cancelled = expect(
    await alice.POST("/api/v1/requests/{id}/cancel", {
      params: { path: { id: dropped.id }, header: { "If-Match": second.response.headers.get("etag") ?? undefined } },
      body: { reason: "submitted twice" },
    }),
    200,
    "cancel the second request",
  );
  check(cancelled.status === "cancelled", `the cancelled request is ${cancelled.status}`);

  // Upload: multipart/form-data as openapi-fetch documents it, a FormData built from the
  // typed body (fetch writes the multipart), its parts in the body's order: `file` first.
  const form: Schemas["UploadDocumentForm"] = {
    // The document types a binary part as a string; fetch sends a Blob as a file part.
    file: new Blob([PDF], { type: "application/pdf" }) as unknown as string,
    kind: "passport_photo",
    request_id: kept.id,
  };
  const upload = await alice.POST("/api/v1/documents/upload", {
    body: form,
    bodySerializer(body) {
      const data = new FormData();
      for (const [name, value] of Object.entries(body)) {
        if ((value as unknown) instanceof Blob) {
          data.append(name, value as unknown as Blob, "passport-photo.pdf");
        } else if (value !== undefined && value !== null) {
          data.append(name, String(value));
        }
      }
      return data;
    },
  });
  const document = expect(upload, 201, "upload document");
  check(document.kind === "passport_photo", `the document's kind is ${document.kind}`);
  check(document.request_id === kept.id, "the document is attached to the request");
  check(document.media_type === "application/pdf", `media_type ${document.media_type}`);
  check(document.size_bytes === PDF.length, `size_bytes ${document.size_bytes}`);
  check(document.sha256 === createHash("sha256").update(PDF).digest("hex"), "sha256 of the stored bytes");

  // A two-valued filter: openapi-fetch sends `status=submitted&status=in_review` (and
  // this journey's service type, as the other journey runs on the same server).
  const openResult = await admin.GET("/api/v1/requests", {
    params: { query: { status: ["submitted", "in_review"], service_type_id: service.id } },
  });
  const open = expect(openResult, 200, "list requests with status=submitted&status=in_review");
  const query = new URL(openResult.response.url).search;
  check(query.includes("status=submitted&status=in_review"), `the filter's wire form: ${query}`);
  check(
    open.items.length === 1 && open.items[0]?.id === kept.id,
    `only the open request: ${open.items.map((item) => item.id).join(", ")}`,
  );
  const both = expect(
    await admin.GET("/api/v1/requests", {
      params: { query: { status: ["submitted", "cancelled"], service_type_id: service.id } },
    }),
    200,
    "list requests with status=submitted&status=cancelled",
  );
  const ids = both.items.map((item) => item.id).sort();
  check(JSON.stringify(ids) === JSON.stringify([kept.id, dropped.id].sort()), `both requests: ${ids.join(", ")}`);

  // Booking: the admin opens a slot in ten days (mission local time); the citizen finds it
  // and books it for the request.
  const day = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
  const report = expect(
    await admin.POST("/api/v1/appointments/slots", {
      body: {
        mission_id: mission.id,
        slots: [{ starts_at: `${day}T09:00`, minutes: 30, capacity: 1, service_type_ids: [service.id] }],
      },
    }),
    200,
    "open a slot",
  );
  check(report.created === 1, `one slot created, not ${report.created}`);
  const slots = expect(
    await alice.GET("/api/v1/appointments/slots", {
      params: { query: { mission_id: mission.id, service_type_id: service.id } },
    }),
    200,
    "list slots",
  );
  const slot = slots.items[0];
  check(slots.items.length === 1 && slot !== undefined, `one open slot, not ${slots.items.length}`);
  const appointment = expect(
    await alice.POST("/api/v1/appointments", {
      params: { header: { "Idempotency-Key": `sdk-${NAME}-${randomUUID()}` } },
      body: { slot_id: slot.id, service_type_id: service.id, request_id: kept.id },
    }),
    201,
    "book appointment",
  );
  check(appointment.status === "booked", `the appointment is ${appointment.status}`);
  check(appointment.slot_id === slot.id, "booked in the slot listed");

  // A call that fails: its problem response is typed as the document's Problem.
  const refused = await admin.POST("/api/v1/missions", {
    body: { code: "Not A Code", name: "x", country: "FR", city: "Paris", timezone: "Europe/Paris" },
  });
  check(refused.response.status === 422, "create mission with a bad code: expected 422", refused.response, refused.data);
  check(refused.error !== undefined, "no problem body", refused.response);
  const problem: Problem = refused.error;
  console.log(`${NAME}: create mission with a bad code (a problem): ${refused.response.status}`);
  check(problem.type === "/problems/validation-failed", `problem type ${problem.type}`, refused.response, problem);
  check(problem.status === 422, `problem status ${problem.status}`, refused.response, problem);
  check(problem.code === "validation_failed", `problem code ${problem.code}`, refused.response, problem);
  check(
    (problem.errors ?? []).some((error) => error.pointer === "/code"),
    "the problem lists the failing field /code",
    refused.response,
    problem,
  );
}

async function main(): Promise<number> {
  const [baseUrl, adminId, adminSecret] = process.argv.slice(2);
  if (baseUrl === undefined || adminId === undefined || adminSecret === undefined) {
    console.error("usage: node build/journey.js BASE_URL ADMIN_CLIENT_ID ADMIN_CLIENT_SECRET");
    return 2;
  }
  try {
    await journey(baseUrl, adminId, adminSecret);
  } catch (failure) {
    if (failure instanceof JourneyFailed) {
      console.error(`${NAME} journey FAILED: ${failure.message}`);
      return 1;
    }
    throw failure;
  }
  console.log(`${NAME} journey: all steps passed`);
  return 0;
}

process.exitCode = await main();
