import Foundation
import ImageCodec
import ImageServer
import NIOHTTP1
@testable import ImageService
import ImagePipeline
import Testing
import TestSupport

/// Every status code the service promises, each from a real request on a loopback socket.
@Suite("Service: status codes over HTTP", .timeLimit(.minutes(2)))
struct ServiceStatusTests {
    @Test("200: the thumbnail at the size asked, JPEG by default and PNG for a source with alpha, exact headers")
    func ok() async throws {
        let harness = try await ServiceHarness.start()
        let reply = try await harness.get(harness.path("rs:fill:200:150", harness.source("kite.jpg")))
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "image/jpeg" && reply.header("Content-Length") == String(reply.body.count))
        #expect(reply.header("Cache-Control") == "public, max-age=31536000")
        #expect(reply.header("Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT")
        let etag = try #require(reply.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34)
        let timing = try #require(reply.header("Server-Timing"))
        for phase in ["queue;dur=", "download;dur=", "decode;dur=", "encode;dur="] { #expect(timing.contains(phase), "\(timing)") }
        let served = try ImageDecoder().decode(reply.body)
        #expect(served.width == 200 && served.height == 150)
        // The same pixels a local decode makes (up to the JPEG encoding at quality 80).
        let local = try ImageDecoder(options: DecodingOptions(resize: .fill(width: 200, height: 150))).decode(try SmallPhotos.data("kite.jpg"))
        let difference = zip(served.pixels, local.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        #expect(Double(difference) / Double(local.pixels.count) < 3, "mean absolute difference \(Double(difference) / Double(local.pixels.count))")

        let png = try await harness.get(harness.path("rs:fit:100:100", harness.source("calla.png")))
        #expect(png.status == 200 && png.header("Content-Type") == "image/png")
        let alpha = try ImageDecoder().decode(png.body)
        #expect(alpha.format == .rgba && max(alpha.width, alpha.height) == 100)
        let forced = try await harness.get(harness.path("rs:fit:100:100/f:jpg", harness.source("calla.png")))
        #expect(try forced.header("Content-Type") == "image/jpeg" && ImageDecoder().decode(forced.body).format == .rgb)

        let head = try await harness.get(harness.path("rs:fill:200:150", harness.source("kite.jpg")), method: .HEAD)
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(reply.body.count) && head.header("ETag") == etag)
        await harness.stop()
    }

    @Test("304: a matching If-None-Match (strong, weak, in a list, or *) is answered without a body")
    func notModified() async throws {
        let harness = try await ServiceHarness.start()
        let path = harness.path("rs:fit:120:120", harness.source("ladybird.jpg"))
        let etag = try #require(try await harness.get(path).header("ETag"))
        for header in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
            let reply = try await harness.get(path, headers: [("If-None-Match", header)])
            #expect(reply.status == 304 && reply.body.isEmpty && reply.header("ETag") == etag, "\(header)")
            #expect(reply.header("Cache-Control") == "public, max-age=31536000" && reply.header("Content-Length") == nil)
        }
        #expect(try await harness.get(path, headers: [("If-None-Match", "\"stale\"")]).status == 200)
        await harness.stop()
    }

    @Test(
        "400: malformed or unknown options, a bad source encoding, an unsupported format, an output past the size limit",
        arguments: [
            "adjust:5", "rs:fill:abc:1", "w:100000", "rs:fit:10:10/dpr:9", "q:500",
            // Every number a URL carries at its extremes: a 400, never a trap (Int.max once
            // reached Int(Double) in the box and killed the process).
            "w:9223372036854775807", "h:9223372036854775807", "rs:fill:9223372036854775807:1", "s:1:9223372036854775807",
            "rs:fit:65536:1/dpr:8", "w:-1", "h:99999999999999999999999", "dpr:nan", "dpr:inf", "dpr:-1", "q:-1", "q:x",
            "exp:99999999999999999999", "g:fp:nan:0.5", "w:0x10"
        ])
    func badRequest(_ options: String) async throws {
        let harness = try await ServiceHarness.start()
        let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
        #expect(reply.status == 400 && reply.header("Cache-Control") == "no-store", "\(options): \(reply.status) \(reply.text)")
        #expect(reply.text.hasPrefix("bad request: ") && reply.text.hasSuffix("\n") && reply.text.filter { $0 == "\n" }.count == 1)
        let badEncoding = try await harness.get(try #require(harness.service.signer.sign("/w:10/not*base64")))
        #expect(badEncoding.status == 400)
        let tiff = try await harness.get(harness.path("w:10", harness.source("kite.jpg"), ext: "tiff"))
        #expect(tiff.status == 400 && tiff.text.contains("tiff"))
        #expect(harness.origin.statistics.requests == 0, "nothing is fetched for a bad request")
        // The process lives on and answers the next request.
        #expect(try await harness.get(harness.path("w:16", harness.source("grey.jpg"))).status == 200)
        await harness.stop()
    }

    @Test("403: a missing, wrong or foreign signature, whatever the rest of the path says; never parsed first")
    func forbidden() async throws {
        let harness = try await ServiceHarness.start()
        let good = harness.path("rs:fit:50:50", harness.source("kite.jpg"))
        let signedPart = String(good.dropFirst().drop { $0 != "/" })
        let foreign = SigningKey(hexKey: "aabbcc", hexSalt: "ddeeff")!
        for path in [
            "/" + signedPart.dropFirst(), "/insecure" + signedPart, "/AAAA" + signedPart,
            "/" + URLSigner.signature(of: signedPart, key: foreign) + signedPart,
            good.replacingOccurrences(of: "rs:fit:50:50", with: "rs:fit:51:50"),
            "/" + URLSigner.signature(of: signedPart, key: ServiceHarness.documentationKey) + "=" + signedPart,
            "/bad/blur:5/%%%", "/", "/x"
        ] {
            let reply = try await harness.get(path)
            #expect(reply.status == 403 && reply.header("Cache-Control") == "no-store", "\(path): \(reply.status)")
            #expect(reply.text == "forbidden: missing or invalid signature\n")
        }
        #expect(harness.origin.statistics.requests == 0)
        await harness.stop()
    }

    @Test("a path a proxy normalised (%3A in the options, http:/ in a plain source) verifies and is served")
    func proxiedPath() async throws {
        let harness = try await ServiceHarness.start()
        let signed = harness.path("rs:fill:40:40/q:70", harness.source("kite.jpg"), plain: true)
        let proxied = signed.replacingOccurrences(of: "rs:fill:40:40/q:70", with: "rs%3Afill%3A40%3A40/q%3A70")
            .replacingOccurrences(of: "http%3A//", with: "http:/").replacingOccurrences(of: "http://", with: "http:/")
        #expect(proxied != signed && proxied.contains("%3A") && proxied.contains("http:/1"))
        let reply = try await harness.get(proxied)
        #expect(reply.status == 200, "\(proxied): \(reply.status) \(reply.text)")
        let bitmap = try ImageDecoder().decode(reply.body)
        #expect((bitmap.width, bitmap.height) == (40, 40))
        // Served, but no shared cache may keep that spelling (each would be a key of its own);
        // the canonical one is public.
        #expect(reply.header("Cache-Control") == "private, no-store" && reply.header("Expires") == nil)
        #expect(try await harness.get(signed).header("Cache-Control") == "public, max-age=31536000")
        await harness.stop()
    }

    @Test("one canonical spelling: a query makes the answer private; padded or non-canonical base64 is refused")
    func canonicalSpelling() async throws {
        let harness = try await ServiceHarness.start()
        let path = harness.path("w:32", harness.source("grey.jpg"))
        for query in ["?1", "?a=b", "?"] {
            let reply = try await harness.get(path + query)
            #expect(reply.status == 200 && reply.header("Cache-Control") == "private, no-store", "\(query)")
        }
        // The signature: 32 bytes are 43 characters, whose last carries 4 unused bits; setting
        // one gives another string for the same bytes.
        let signature = String(path.dropFirst().prefix { $0 != "/" })
        let signed = String(path.dropFirst(1 + signature.count))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(alphabet.firstIndex(of: signature.last!))
        let loose = String(signature.dropLast()) + String(alphabet[last ^ 1])
        #expect(Base64URL.decode(loose) == Base64URL.decode(signature) && loose != signature)
        #expect(try await harness.get("/" + loose + signed).status == 403)
        // The source: a padded or loose encoding of the same URL, correctly signed, is a 400.
        let encoded = Base64URL.encode(Array(harness.source("grey.jpg").utf8))
        let tail = try #require(alphabet.firstIndex(of: encoded.last!))
        for variant in [encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4), String(encoded.dropLast()) + String(alphabet[tail ^ 1])]
        where variant != encoded {
            let reply = try await harness.get(try #require(harness.service.signer.sign("/w:32/" + variant)))
            #expect(reply.status == 400 && reply.text.contains("canonical base64url"), "\(variant): \(reply.status) \(reply.text)")
        }
        await harness.stop()
    }

    @Test("exp: max-age stops at the URL's expiry, and Expires says the same moment")
    func expiringFreshness() async throws {
        let harness = try await ServiceHarness.start()
        let now = Int(Date().timeIntervalSince1970)
        let reply = try await harness.get(harness.path("w:32/exp:\(now + 120)", harness.source("grey.jpg")))
        // The seconds left when it was answered: between what was left before the request and after it.
        let after = Int(Date().timeIntervalSince1970)
        let maxAge = try #require(reply.header("Cache-Control").flatMap { Int($0.replacingOccurrences(of: "public, max-age=", with: "")) })
        #expect(reply.status == 200 && (now + 120 - after - 1...120).contains(maxAge), "\(reply.header("Cache-Control") ?? "-")")
        let expires = try #require(reply.header("Expires").flatMap(HTTPDate.parse))
        #expect(abs(expires.timeIntervalSince1970 - Double(now + 120)) <= 2)
        // A URL without an expiry keeps the TTL.
        let plain = try await harness.get(harness.path("w:32", harness.source("grey.jpg")))
        #expect(plain.header("Cache-Control") == "public, max-age=31536000" && plain.header("Expires") != nil)
        await harness.stop()
    }

    @Test("IMAGE_ENGINE_SIGNATURE_SIZE: a truncated signature of the configured size is served, a full one refused")
    func truncatedSignature() async throws {
        let harness = try await ServiceHarness.start { $0.signatureSize = 8 }
        let unsigned = URLSigner.unsignedPath(options: "w:32", source: harness.source("grey.jpg"))
        let short = try await harness.get("/" + URLSigner.signature(of: unsigned, key: ServiceHarness.documentationKey, size: 8) + unsigned)
        let full = try await harness.get("/" + URLSigner.signature(of: unsigned, key: ServiceHarness.documentationKey) + unsigned)
        #expect(short.status == 200 && full.status == 403)
        await harness.stop()
    }

    @Test("key rotation: paths signed with either configured pair are served, a third pair is refused")
    func rotation() async throws {
        let newKey = SigningKey(hexKey: "0123456789abcdef", hexSalt: "fedcba98")!
        let harness = try await ServiceHarness.start { $0.keys = [newKey, ServiceHarness.documentationKey] }
        let unsigned = URLSigner.unsignedPath(options: "rs:fit:64:64", source: harness.source("grey.jpg"))
        for (key, status) in [(newKey, 200), (ServiceHarness.documentationKey, 200), (SigningKey(hexKey: "01", hexSalt: "02")!, 403)] {
            let reply = try await harness.get("/" + URLSigner.signature(of: unsigned, key: key) + unsigned)
            #expect(reply.status == status)
        }
        await harness.stop()
    }

    @Test("--unsafe: the signature segment is ignored")
    func unsafe() async throws {
        let harness = try await ServiceHarness.start {
            $0.keys = []
            $0.requiresSignature = false
        }
        let unsigned = URLSigner.unsignedPath(options: "rs:fit:64:64", source: harness.source("grey.jpg"))
        #expect(try await harness.get("/insecure" + unsigned).status == 200)
        #expect(try await harness.get("/anything-at-all" + unsigned).status == 200)
        #expect(try await harness.get("/x/blur:1/abc").status == 400, "without signatures, a malformed path is 400")
        await harness.stop()
    }

    @Test("404: the origin's 404, a source outside the allowed sources")
    func notFound() async throws {
        let harness = try await ServiceHarness.start { $0.sourcePolicy.allowedSources = [] }
        let missing = try await harness.get(harness.path("w:10", harness.source("missing.jpg")))
        #expect(missing.status == 404 && missing.text == "not found: the source answered 404\n" && missing.header("Cache-Control") == "no-store")
        await harness.stop()
        let prefixed = try await ServiceHarness.start { $0.sourcePolicy.allowedSources = [AllowedSource("https://cdn.example.com/")!] }
        let outside = try await prefixed.get(prefixed.path("w:10", prefixed.source("kite.jpg")))
        #expect(outside.status == 404 && outside.text.contains("not under an allowed source"))
        #expect(prefixed.origin.statistics.requests == 0)
        await prefixed.stop()
    }

    @Test("405 for other methods, 414 for a path over the limit")
    func methodAndLength() async throws {
        let harness = try await ServiceHarness.start { $0.maxPathLength = 300 }
        let post = try await harness.get(harness.path("w:10", harness.source("kite.jpg")), method: .POST)
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
        let long = try await harness.get(harness.path("w:10/cb:" + String(repeating: "x", count: 300), harness.source("kite.jpg")))
        #expect(long.status == 414)
        await harness.stop()
    }

    @Test("410: an expires time in the past; one in the future is served")
    func expired() async throws {
        let harness = try await ServiceHarness.start()
        let now = Int(Date().timeIntervalSince1970)
        let past = try await harness.get(harness.path("w:10/exp:\(now - 10)", harness.source("kite.jpg")))
        #expect(past.status == 410 && past.header("Cache-Control") == "no-store")
        #expect(try await harness.get(harness.path("w:10/exp:\(now + 3600)", harness.source("kite.jpg"))).status == 200)
        await harness.stop()
    }

    @Test("422: an HTML page served with 200, a source over --max-src-bytes (announced or chunked) or --max-src-pixels; nothing is cached")
    func unprocessable() async throws {
        let harness = try await ServiceHarness.start(diskCache: true) {
            $0.maxSourceBytes = 300_000
            $0.maxSourcePixels = 140_000
        }
        let big = Data(repeating: 0xFF, count: 400_000)
        harness.origin.serve("/big.jpg", ImageServer.Resource(data: big))
        harness.origin.serve("/big-chunked.jpg", ImageServer.Resource(data: big))
        harness.origin.setFault("/big-chunked.jpg", .chunked)
        harness.origin.setFault("/page.jpg", .htmlPage)
        // kite.jpg is 480×300 = 144,000 pixels: over the 140,000 limit, under the byte limit.
        for (name, message) in [
            ("page.jpg", "not a JPEG, PNG, WebP, HEIC or AVIF"), ("big.jpg", "more than 300000 bytes"), ("big-chunked.jpg", "more than 300000 bytes"),
            ("kite.jpg", "more than 140000 pixels")
        ] {
            for attempt in 1...2 {
                let reply = try await harness.get(harness.path("w:50", harness.source(name)))
                #expect(reply.status == 422 && reply.text.contains(message) && reply.header("Cache-Control") == "no-store", "\(name): \(reply.text)")
                #expect(harness.origin.requests("/\(name)") == attempt, "\(name): a refused source is fetched again, never served from a cache")
            }
        }
        await harness.service.flush()
        #expect(
            harness.service.pipeline.statistics.diskCount == 0 && harness.service.results.counts.memory == 0
                && harness.service.results.counts.disk == 0)
        #expect(harness.service.statistics.decodes == 0)
        await harness.stop()
    }

    @Test("429 with Retry-After when the queue is full, while /ready answers 503; both recover")
    func queueFull() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate) {
            $0.workers = 1
            $0.queueLimit = 1
        }
        let running = Task { try await harness.get(harness.path("w:60", harness.source("kite.jpg"))) }
        #expect(await gate.waitForArrivals(1))
        let queued = Task { try await harness.get(harness.path("w:60", harness.source("ladybird.jpg"))) }
        #expect(await pollUntil { harness.service.admission.snapshot.waiting >= 1 })
        let ready = try await harness.get("/ready")
        #expect(ready.status == 503 && ready.header("Cache-Control") == "no-store")
        #expect(try await harness.get("/health").status == 200)
        let refused = try await harness.get(harness.path("w:60", harness.source("grey.jpg")))
        #expect(refused.status == 429 && refused.header("Retry-After") == "1" && refused.header("Cache-Control") == "no-store")
        gate.open()
        #expect(try await running.value.status == 200)
        #expect(try await queued.value.status == 200)
        #expect(try await harness.get("/ready").status == 200)
        #expect(try await harness.get(harness.path("w:60", harness.source("grey.jpg"))).status == 200)
        await harness.stop()
    }

    @Test(
        "502: an origin error status, a reset connection, a truncated body, a redirect loop",
        arguments: [
            ImageServer.Fault.status(500), .status(403), .connectionReset, .truncatedBody, .redirect(location: "/loop.jpg")
        ])
    func badGateway(_ fault: ImageServer.Fault) async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.setFault("/loop.jpg", fault)
        let reply = try await harness.get(harness.path("w:10", harness.source("loop.jpg")))
        #expect(reply.status == 502 && reply.header("Cache-Control") == "no-store", "\(fault): \(reply.status) \(reply.text)")
        #expect(reply.text.hasPrefix("bad gateway: "))
        if case .redirect = fault { #expect(harness.origin.requests("/loop.jpg") == 6, "the first request and 5 redirects") }
        await harness.stop()
    }

    @Test("504: an origin slower than --download-timeout")
    func gatewayTimeout() async throws {
        let harness = try await ServiceHarness.start { $0.downloadTimeout = 0.5 }
        // Stalled past the request's own deadline: only the download timeout answers with this text.
        harness.origin.setFault("/slow.jpg", .stall(.seconds(15)))
        let reply = try await harness.get(harness.path("w:10", harness.source("slow.jpg")))
        #expect(reply.status == 504 && reply.header("Cache-Control") == "no-store")
        #expect(reply.text.contains("the source did not answer in time"), "\(reply.text)")
        harness.origin.setFault("/drip.jpg", .slowDrip(interval: .milliseconds(100)))
        let drip = try await harness.get(harness.path("w:10", harness.source("drip.jpg")))
        #expect(drip.status == 504, "\(drip.status) \(drip.text)")
        await harness.stop()
    }

    @Test("422 for a WebP or AVIF over 4096², and for an encoder that alone would pass --max-memory: before anything is decoded")
    func encoderBounds() async throws {
        let harness = try await ServiceHarness.start { $0.memoryBudget = 48 << 20 }
        let huge = try await harness.get(harness.path("rs:force:4097:4097/f:avif", harness.source("kite.jpg")))
        #expect(huge.status == 422 && huge.text.contains("avif is more than 16777216 pixels"), "\(huge.status) \(huge.text)")
        // 1800² in AVIF: the decode plan fits 48 MiB, the encoder's 22 bytes a pixel do not.
        let heavy = try await harness.get(harness.path("rs:fit:1800:1800/el:1/f:avif", harness.source("kite.jpg")))
        #expect(heavy.status == 422 && heavy.text.contains("more than the service's memory budget"), "\(heavy.status) \(heavy.text)")
        #expect(harness.service.statistics.decodes == 0)
        // The same size in JPEG fits.
        #expect(try await harness.get(harness.path("rs:fit:1800:1800/el:1/f:jpg", harness.source("kite.jpg"))).status == 200)
        await harness.stop()
    }

    @Test("503 while draining: /ready and image requests; /health stays 200")
    func draining() async throws {
        let harness = try await ServiceHarness.start()
        harness.service.startDraining()
        #expect(try await harness.get("/ready").status == 503)
        #expect(try await harness.get("/health").status == 200)
        let reply = try await harness.get(harness.path("w:10", harness.source("kite.jpg")))
        #expect(reply.status == 503 && reply.header("Cache-Control") == "no-store")
        #expect(harness.origin.statistics.requests == 0)
        await harness.stop()
    }
}
