//! The release and the crowd: the slots submitted with `release_at`, then every citizen
//! and bot as a task of its own, from the submission until booked, sold out or the
//! timeout; what each saw, and the CPU of the machine before and during the rush.

use super::Knobs;
use super::backends::Backends;
use super::seed::World;
use consular_tests::TestApp;
use consular_tests::bench::{CpuSample, CpuSplit, Result};
use consular_tests::reqwest::{Client, RequestBuilder};
use consular_tests::serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::Semaphore;

/// An empty page this long after the release means sold out to a citizen who never saw
/// an open slot: the nodes' availability cache (1 s) and a margin.
const SOLD_OUT_GRACE: Duration = Duration::from_secs(3);
/// How often a bot polls while nothing is open.
const BOT_POLL: Duration = Duration::from_millis(100);
/// Every tenth citizen double-clicks "book": two bookings at once, each with its own key.
const DOUBLE_CLICK_EVERY: usize = 10;

/// One answer: when it was sent (ms from the release, negative before), its status (0:
/// no HTTP answer), the problem's `code` ("" otherwise) and the time it took.
pub(crate) struct Answer {
    pub(crate) at_ms: i64,
    pub(crate) status: u16,
    pub(crate) code: String,
    pub(crate) micros: u32,
}

/// What one citizen or bot saw.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) polls: Vec<Answer>,
    pub(crate) bookings: Vec<Answer>,
    /// Still trying at the timeout.
    pub(crate) timed_out: bool,
    /// 429s without a `Retry-After` in seconds.
    pub(crate) retry_after_missing: usize,
    /// An answer the scenario does not expect, which ended this person's run.
    pub(crate) unexpected: Option<String>,
}

/// The bots take turns: even ones ignore `Retry-After` (beyond the cap), odd ones wait it
/// out (at the cap).
pub(crate) fn beyond_the_cap(bot: usize) -> bool {
    bot.is_multiple_of(2)
}

/// What the rush measured.
pub(crate) struct Rush {
    pub(crate) release_at: OffsetDateTime,
    pub(crate) citizens: Vec<Tally>,
    pub(crate) bots: Vec<Tally>,
    /// The machine while everyone polled before the release (the first poll period left
    /// out: each citizen's first poll is a 200).
    pub(crate) before: CpuSplit,
    /// When `before` starts, ms from the release (negative).
    pub(crate) before_from_ms: i64,
    /// From the release until the last citizen was done.
    pub(crate) during: CpuSplit,
    /// When the last citizen was done, ms from the release.
    pub(crate) done_ms: i64,
    /// CPU seconds of the bench database's backends over `during` ([`Backends`]).
    pub(crate) database_seconds: f64,
}

/// What every task shares.
struct Crowd {
    nodes: Vec<Node>,
    /// The citizens' connections: at most `knobs.connections` requests at once.
    http: Client,
    permits: Semaphore,
    service: String,
    release: Instant,
    deadline: Instant,
    /// Every citizen is done: the bots stop.
    over: AtomicBool,
    knobs: Knobs,
}

/// The URLs of one node.
struct Node {
    availability: String,
    /// The bots read the largest page.
    bot_availability: String,
    book: String,
}

/// The open slots of a page, with its `ETag`.
struct Page {
    etag: String,
    open: Vec<String>,
}

/// How one booking ended, for the one who sent it.
enum Booked {
    Yes,
    /// Look again (the page was stale).
    Refused,
    /// 429: come back after this long.
    Wait(Duration),
    /// `already_booked`: the request (or, without one, the slot) has its booking already.
    AlreadyHeld,
    /// `booking_limit_reached`: as many upcoming bookings as a citizen may hold.
    LimitReached,
    Unexpected(String),
}

pub(crate) async fn rush(nodes: &[&TestApp], url: &str, world: &World, knobs: &Knobs) -> Result<Rush> {
    let release_at = submit(nodes[0], world, knobs).await?;
    let until = release_at - OffsetDateTime::now_utc();
    let release =
        Instant::now() + Duration::try_from(until).map_err(|_| "the release passed during the submission")?;
    let query =
        format!("/api/v1/appointments/slots?mission_id={}&service_type_id={}", world.mission, world.service);
    let crowd = Arc::new(Crowd {
        nodes: nodes
            .iter()
            .map(|n| Node {
                availability: n.url(&format!("{query}&limit={}", knobs.page)),
                bot_availability: n.url(&format!("{query}&limit=100")),
                book: n.url("/api/v1/appointments"),
            })
            .collect(),
        http: client(knobs.connections)?,
        permits: Semaphore::new(knobs.connections),
        service: world.service.clone(),
        release,
        deadline: release + knobs.timeout,
        over: AtomicBool::new(false),
        knobs: *knobs,
    });
    let window_start = Instant::now() + knobs.poll + Duration::from_secs(1);
    let sampler = {
        let url = url.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep_until(window_start.into()).await;
            let start = CpuSample::take();
            // psql takes tens of ms: the backends are read just before the release, when
            // the nodes answer from their caches.
            tokio::time::sleep_until((release - Duration::from_millis(300)).into()).await;
            let backends = Backends::sample(&url).await;
            tokio::time::sleep_until(release.into()).await;
            (start, CpuSample::take(), backends)
        })
    };
    let citizens: Vec<_> = (0..knobs.citizens)
        .map(|i| {
            tokio::spawn(citizen(
                crowd.clone(),
                i,
                world.citizens[i].token.clone(),
                world.citizens[i].request.clone(),
            ))
        })
        .collect();
    let bots: Vec<_> =
        (0..knobs.bots).map(|b| tokio::spawn(bot(crowd.clone(), b, world.bots[b].token.clone()))).collect();
    let mut citizen_tallies = Vec::with_capacity(citizens.len());
    for task in citizens {
        citizen_tallies.push(task.await.map_err(|e| format!("a citizen's task: {e}"))?);
    }
    let end = CpuSample::take();
    let done_ms = crowd.ms_from_release(Instant::now());
    let backends_end = Backends::sample(url).await?;
    crowd.over.store(true, Ordering::Relaxed);
    let mut bot_tallies = Vec::with_capacity(bots.len());
    for task in bots {
        bot_tallies.push(task.await.map_err(|e| format!("a bot's task: {e}"))?);
    }
    let (start, at_release, backends) = sampler.await.map_err(|e| format!("the CPU sampler: {e}"))?;
    Ok(Rush {
        release_at,
        citizens: citizen_tallies,
        bots: bot_tallies,
        before: at_release.since(&start),
        before_from_ms: crowd.ms_from_release(window_start),
        during: end.since(&at_release),
        database_seconds: backends_end.since(&backends?),
        done_ms,
    })
}

/// The mission's slots, `release_at` the first whole second `knobs.lead` from now: 10 a
/// day from 08:00 local, 30 minutes each, from the day after tomorrow.
async fn submit(app: &TestApp, world: &World, knobs: &Knobs) -> Result<OffsetDateTime> {
    let ahead = OffsetDateTime::now_utc() + knobs.lead;
    let release_at = ahead.replace_nanosecond(0).map_err(|e| e.to_string())? + time::Duration::SECOND;
    let today = OffsetDateTime::now_utc().date();
    let slots: Vec<Value> = (0..knobs.slots())
        .map(|i| {
            let day = today + time::Duration::days(2 + (i / 10) as i64);
            let (hour, minute) = (8 + (i % 10) / 2, 30 * (i % 2));
            json!({
                "starts_at": format!("{day}T{hour:02}:{minute:02}"),
                "minutes": 30,
                "capacity": knobs.capacity,
                "service_type_ids": [world.service],
            })
        })
        .collect();
    let release_text = release_at.format(&Rfc3339).map_err(|e| e.to_string())?;
    let body = json!({ "mission_id": world.mission, "release_at": release_text, "slots": slots });
    let response = app.post_json("/api/v1/appointments/slots", &world.admin, &body).await;
    let status = response.status();
    let answer = response.text().await.unwrap_or_default();
    if status != 200 {
        return Err(format!("POST /api/v1/appointments/slots with release_at: {status} {answer}"));
    }
    println!(
        "slots: {} of {} seats ({} seats) submitted with release_at {release_text}, {:.1} s ahead",
        knobs.slots(),
        knobs.capacity,
        knobs.seats,
        (release_at - OffsetDateTime::now_utc()).as_seconds_f64(),
    );
    Ok(release_at)
}

/// Keep-alive connections, each closed by the client after 4 s idle: the server closes
/// them after 5 s (actix-web's default keep-alive), and a request sent on a connection
/// the server is closing gets no answer.
fn client(connections: usize) -> Result<Client> {
    Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(connections)
        .pool_idle_timeout(Duration::from_secs(4))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// A citizen: polls until slots are open (`If-None-Match` with the last page's tag),
/// thinks, books one open slot of the page for their request, and again after a refusal,
/// until booked or sold out.
async fn citizen(crowd: Arc<Crowd>, i: usize, token: String, request: String) -> Tally {
    let mut rng = Rng(i as u64 + 1);
    let node = &crowd.nodes[i % crowd.nodes.len()];
    let knobs = &crowd.knobs;
    let mut tally = Tally::default();
    let mut page: Option<Page> = None;
    let mut seen_open = false;
    tokio::time::sleep(rng.between(Duration::ZERO, knobs.poll)).await;
    loop {
        if Instant::now() >= crowd.deadline {
            tally.timed_out = true;
            return tally;
        }
        let etag = page.as_ref().map(|p| p.etag.clone());
        let polled = {
            let _permit = crowd.permits.acquire().await;
            crowd.poll(&crowd.http, &node.availability, &token, etag.as_deref()).await
        };
        match polled {
            Ok((answer, fresh)) => {
                tally.polls.push(answer);
                if fresh.is_some() {
                    page = fresh;
                }
            }
            Err(answer) => {
                tally.unexpected = Some(format!("poll: {} {}", answer.status, answer.code));
                tally.polls.push(answer);
                return tally;
            }
        }
        let open = page.as_ref().map_or(&[][..], |p| &p.open[..]);
        if open.is_empty() {
            if seen_open || Instant::now() >= crowd.release + SOLD_OUT_GRACE {
                return tally;
            }
            tokio::time::sleep(rng.between(knobs.poll / 2, knobs.poll * 3 / 2)).await;
            continue;
        }
        seen_open = true;
        let slot = open[rng.below(open.len())].clone();
        tokio::time::sleep(rng.between(knobs.think_min, knobs.think_max)).await;
        let body = json!({ "slot_id": slot, "service_type_id": crowd.service, "request_id": request });
        let outcome = if i % DOUBLE_CLICK_EVERY == DOUBLE_CLICK_EVERY - 1 {
            let (a, b) = tokio::join!(
                crowd.citizen_books(node, &token, &body),
                crowd.citizen_books(node, &token, &body)
            );
            let (a, b) = (tally.booking(a), tally.booking(b));
            match (a, b) {
                (Booked::Unexpected(why), _) | (_, Booked::Unexpected(why)) => Booked::Unexpected(why),
                (Booked::Yes, _) | (_, Booked::Yes) => Booked::Yes,
                (Booked::LimitReached, _) | (_, Booked::LimitReached) => Booked::LimitReached,
                (Booked::AlreadyHeld, _) | (_, Booked::AlreadyHeld) => Booked::AlreadyHeld,
                (Booked::Wait(after), _) | (_, Booked::Wait(after)) => Booked::Wait(after),
                (Booked::Refused, Booked::Refused) => Booked::Refused,
            }
        } else {
            let answer = crowd.citizen_books(node, &token, &body).await;
            tally.booking(answer)
        };
        match outcome {
            // The request has its booking: this citizen's, made by the other click.
            Booked::Yes | Booked::AlreadyHeld => return tally,
            Booked::Refused => {}
            Booked::Wait(after) => tokio::time::sleep(after).await,
            Booked::LimitReached => {
                tally.unexpected = Some("booking_limit_reached for a citizen with one request".to_owned());
                return tally;
            }
            Booked::Unexpected(why) => {
                tally.unexpected = Some(why);
                return tally;
            }
        }
    }
}

/// A bot: polls the largest page without `If-None-Match` every 100 ms until slots open,
/// then books every open slot it does not hold in turn, without a request, as fast as it
/// may (at the cap: waits `Retry-After` after a 429) or faster (beyond it:
/// `knobs.bot_pause` between attempts, whatever the answer). Holding as many seats as a
/// citizen may (`booking_limit_reached`) does not stop it: a script keeps trying for more
/// until the slots are sold out or the citizens are done.
async fn bot(crowd: Arc<Crowd>, b: usize, token: String) -> Tally {
    let mut tally = Tally::default();
    let Ok(http) = client(1) else {
        tally.unexpected = Some("no HTTP client".to_owned());
        return tally;
    };
    let node = &crowd.nodes[b % crowd.nodes.len()];
    let beyond = beyond_the_cap(b);
    let mut held: HashSet<String> = HashSet::new();
    let mut seen_open = false;
    'run: while !crowd.stopped() {
        let open = match crowd.poll(&http, &node.bot_availability, &token, None).await {
            Ok((answer, page)) => {
                tally.polls.push(answer);
                page.map(|p| p.open).unwrap_or_default()
            }
            Err(answer) => {
                tally.unexpected = Some(format!("poll: {} {}", answer.status, answer.code));
                tally.polls.push(answer);
                break;
            }
        };
        let open: Vec<String> = open.into_iter().filter(|s| !held.contains(s)).collect();
        if open.is_empty() {
            if seen_open || Instant::now() >= crowd.release + SOLD_OUT_GRACE {
                break;
            }
            crowd.pause(BOT_POLL).await;
            continue;
        }
        seen_open = true;
        for slot in open {
            if crowd.stopped() {
                break 'run;
            }
            let body = json!({ "slot_id": slot, "service_type_id": crowd.service });
            let answer = crowd.book(&http, &node.book, &token, &body).await;
            match tally.booking(answer) {
                Booked::Yes => {
                    held.insert(slot);
                }
                // A slot it holds, seen on a stale page; or three seats held already.
                Booked::Refused | Booked::AlreadyHeld | Booked::LimitReached => {}
                Booked::Wait(after) => crowd.pause(if beyond { crowd.knobs.bot_pause } else { after }).await,
                Booked::Unexpected(why) => {
                    tally.unexpected = Some(why);
                    break 'run;
                }
            }
            if beyond {
                crowd.pause(crowd.knobs.bot_pause).await;
            }
        }
    }
    tally
}

impl Crowd {
    fn stopped(&self) -> bool {
        self.over.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// Sleeps `length`, or less when the run is over.
    async fn pause(&self, length: Duration) {
        let end = Instant::now() + length;
        while !self.stopped() && Instant::now() < end {
            tokio::time::sleep((end - Instant::now()).min(Duration::from_millis(100))).await;
        }
    }

    fn ms_from_release(&self, at: Instant) -> i64 {
        if at >= self.release {
            (at - self.release).as_millis() as i64
        } else {
            -((self.release - at).as_millis() as i64)
        }
    }

    /// One poll: 200 with the page, 304 without; `Err` for anything else.
    async fn poll(
        &self,
        http: &Client,
        url: &str,
        token: &str,
        etag: Option<&str>,
    ) -> Result<(Answer, Option<Page>), Answer> {
        let mut request = http.get(url).bearer_auth(token);
        if let Some(tag) = etag {
            request = request.header("if-none-match", tag);
        }
        let (mut answer, headers, body) = self.send(request).await;
        match answer.status {
            304 => Ok((answer, None)),
            200 => {
                let etag = headers.get("etag").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                let parsed: Option<Vec<String>> =
                    consular_tests::serde_json::from_slice::<Value>(&body).ok().and_then(|page| {
                        page["items"].as_array().map(|items| {
                            items
                                .iter()
                                .filter(|s| s["remaining"].as_u64().is_some_and(|r| r > 0))
                                .filter_map(|s| s["id"].as_str().map(str::to_owned))
                                .collect()
                        })
                    });
                match parsed {
                    Some(open) if !etag.is_empty() => Ok((answer, Some(Page { etag, open }))),
                    _ => {
                        answer.code =
                            format!("a page without items or ETag: {}", String::from_utf8_lossy(&body));
                        Err(answer)
                    }
                }
            }
            _ => Err(answer),
        }
    }

    /// A citizen's booking, through the shared connections.
    async fn citizen_books(&self, node: &Node, token: &str, body: &Value) -> (Answer, Option<Duration>) {
        let _permit = self.permits.acquire().await;
        self.book(&self.http, &node.book, token, body).await
    }

    /// `POST /api/v1/appointments` with a fresh `Idempotency-Key`: the answer and, for a
    /// 429, its `Retry-After`.
    async fn book(&self, http: &Client, url: &str, token: &str, body: &Value) -> (Answer, Option<Duration>) {
        let request = http
            .post(url)
            .bearer_auth(token)
            .header("idempotency-key", uuid::Uuid::now_v7().to_string())
            .json(body);
        let (answer, headers, _) = self.send(request).await;
        let retry_after = headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        (answer, retry_after)
    }

    /// Sends `request` and reads the whole answer; a problem's `code` is kept.
    async fn send(
        &self,
        request: RequestBuilder,
    ) -> (Answer, consular_tests::reqwest::header::HeaderMap, Vec<u8>) {
        let sent = Instant::now();
        let at_ms = self.ms_from_release(sent);
        let result = async {
            let response = request.send().await?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            Ok::<_, consular_tests::reqwest::Error>((status, headers, body.to_vec()))
        }
        .await;
        let micros = u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX);
        match result {
            Ok((status, headers, body)) => {
                let code = if status >= 400 {
                    consular_tests::serde_json::from_slice::<Value>(&body)
                        .ok()
                        .and_then(|p| p["code"].as_str().map(str::to_owned))
                        .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned())
                } else {
                    String::new()
                };
                (Answer { at_ms, status, code, micros }, headers, body)
            }
            Err(e) => {
                // reqwest's message names the URL only: the causes say what happened.
                let mut code = e.to_string();
                let mut cause = std::error::Error::source(&e);
                while let Some(inner) = cause {
                    code = format!("{code}: {inner}");
                    cause = inner.source();
                }
                (Answer { at_ms, status: 0, code, micros }, Default::default(), Vec::new())
            }
        }
    }
}

impl Tally {
    /// Records a booking's answer and says what it means for the one who sent it.
    fn booking(&mut self, (answer, retry_after): (Answer, Option<Duration>)) -> Booked {
        let outcome = match (answer.status, answer.code.as_str()) {
            (201, _) => Booked::Yes,
            (409, "slot_full" | "booking_closed") => Booked::Refused,
            (409, "already_booked") => Booked::AlreadyHeld,
            (409, "booking_limit_reached") => Booked::LimitReached,
            (429, _) => {
                if retry_after.is_none() {
                    self.retry_after_missing += 1;
                }
                Booked::Wait(retry_after.unwrap_or(Duration::from_secs(1)))
            }
            (status, code) => Booked::Unexpected(format!("booking: {status} {code}")),
        };
        self.bookings.push(answer);
        outcome
    }
}

/// SplitMix64: each task's own reproducible choices (slot, think time, jitter).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn between(&mut self, low: Duration, high: Duration) -> Duration {
        let span = high.saturating_sub(low).as_millis() as u64;
        low + Duration::from_millis(if span == 0 { 0 } else { self.next() % (span + 1) })
    }
}
