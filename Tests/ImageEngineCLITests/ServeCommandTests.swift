import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCodec
import ImageServer
import Testing
import TestSupport

@Suite("CLI: serve and sign", .timeLimit(.minutes(3)))
struct ServeCommandTests {
    static let environment = ["IMAGE_ENGINE_KEY": "736563726574", "IMAGE_ENGINE_SALT": "68656C6C6F"]

    /// GET through a session that keeps no cache; the status, headers and body.
    static func get(_ url: String, accept: String? = nil) async throws -> (status: Int, headers: [String: String], body: Data) {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: try #require(URL(string: url)))
        request.setValue(accept, forHTTPHeaderField: "Accept")
        let (body, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        let headers = Dictionary(http.allHeaderFields.map { ("\($0.key)".lowercased(), "\($0.value)") }, uniquingKeysWith: { $1 })
        return (http.statusCode, headers, body)
    }

    @Test("sign prints imgproxy's documentation example, byte for byte")
    func signDocumentationVector() async throws {
        let outcome = try await CLIRunner.run(
            ["sign", "http://example.com/images/curiosity.jpg", "--options", "rs:fill:300:400:0/g:sm", "--ext", "png"],
            environment: Self.environment)
        #expect(outcome.status == 0)
        #expect(
            outcome.stdout
                == "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png\n"
        )
        let plain = try await CLIRunner.run(["sign", "http://example.com/a b.jpg", "--options", "w:10", "--plain"], environment: Self.environment)
        #expect(plain.status == 0 && plain.stdout.hasSuffix("/w:10/plain/http://example.com/a%20b.jpg\n"))
        let keyless = try await CLIRunner.run(["sign", "http://example.com/a.jpg", "--options", "w:10"], environment: [:])
        #expect(keyless.status == 64 && keyless.stderr.contains("IMAGE_ENGINE_KEY") && keyless.stderr.split(separator: "\n").count == 1)
    }

    @Test(
        "serve refuses to start without a key unless --unsafe, and usage mistakes are one line naming the option",
        arguments: [
            ([], [String: String](), "IMAGE_ENGINE_KEY"), (["--bind", "8080"], environment, "--bind"), (["--workers", "0"], environment, "--workers"),
            (["--queue", "-1"], environment, "--queue"), (["--max-memory", "lots"], environment, "--max-memory"),
            (["--max-src-bytes", "0"], environment, "--max-src-bytes"), (["--max-src-pixels", "0"], environment, "--max-src-pixels"),
            (["--memory-cache", "0"], environment, "--memory-cache"),
            (["--memory-cache-min-uses", "0"], environment, "--memory-cache-min-uses"),
            (["--memory-cache-min-uses", "256"], environment, "--memory-cache-min-uses"),
            (["--download-timeout", "0"], environment, "--download-timeout"), (["--ttl", "-5"], environment, "--ttl"),
            (["--metrics-bind", "nowhere"], environment, "--metrics-bind"), (["--shutdown-timeout", "-1"], environment, "--shutdown-timeout"),
            (["--allowed-source", "ftp://x/"], environment, "--allowed-source"),
            (["--allowed-source", "https://a.example.com/p/../q"], environment, "--allowed-source"),
            (["--max-downloads", "0"], environment, "--max-downloads"), (["--max-downloads-per-host", "0"], environment, "--max-downloads-per-host"),
            (["--download-queue", "-1"], environment, "--download-queue"), (["--max-connections", "0"], environment, "--max-connections"),
            (["--keep-alive-timeout", "0"], environment, "--keep-alive-timeout"),
            // Durations past an hour (1e300 once reached a conversion that traps), and the rest.
            (["--keep-alive-timeout", "1e300"], environment, "--keep-alive-timeout"),
            (["--request-timeout", "nan"], environment, "--request-timeout"),
            (["--request-read-timeout", "0"], environment, "--request-read-timeout"),
            (["--response-write-timeout", "3601"], environment, "--response-write-timeout"),
            (["--download-timeout", "inf"], environment, "--download-timeout"), (["--ttl", "9999999999"], environment, "--ttl"),
            (["--min-download-rate", "0"], environment, "--min-download-rate"),
            ([], environment.merging(["IMAGE_ENGINE_SIGNATURE_SIZE": "33"]) { $1 }, "IMAGE_ENGINE_SIGNATURE_SIZE"),
            ([], ["IMAGE_ENGINE_KEY": "abc", "IMAGE_ENGINE_SALT": "00"], "IMAGE_ENGINE_KEY")
        ])
    func usage(_ arguments: [String], _ environment: [String: String], _ named: String) async throws {
        // A serve that starts instead of refusing is stopped after 20 s, and fails here.
        let outcome = try await CLIRunner.run(["serve", "--bind", "127.0.0.1:0"] + arguments, environment: environment, timeout: 20)
        #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.contains(named) && outcome.stderr.split(separator: "\n").count == 1, "\(arguments): \(outcome.stderr)")
    }

    @Test("the open-file limit: a soft limit below what --max-connections needs is raised; a hard one is one line and exit 1")
    func openFileLimit() async throws {
        let serve = "'\(CLIRunner.executable.path)' serve --bind 127.0.0.1:0 --max-connections 2048"
        // A hard limit of 600: the 2,048 connections cannot be had.
        let refused = try await CLIRunner.shell("ulimit -n 600 && exec \(serve)", environment: Self.environment, timeout: 20)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr == "image-engine: cannot start: --max-connections 2048 and --max-downloads 64 need 2240 open files, "
                + "and the limit is 600 (raise LimitNOFILE or ulimit -n, or lower them)\n")
        // A soft limit of 256 under a hard one that allows 2,240: raised, and serve listens.
        let hard = try await CLIRunner.shell("ulimit -Hn", timeout: 10).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard hard == "unlimited" || (Int(hard) ?? 0) >= 2240 else { return }
        let started = try await CLIRunner.shell(
            "log=$(mktemp); ulimit -Sn 256 && { \(serve) 2>$log & pid=$!; "
                + "for _ in $(seq 100); do grep -q 'listening on' $log && break; sleep 0.1; done; "
                + "cat $log; grep 'Max open files' /proc/$pid/limits; kill $pid; wait $pid; rm -f $log; }",
            environment: Self.environment, timeout: 30)
        let soft = started.stdout.split(separator: "\n").first { $0.hasPrefix("Max open files") }
            .flatMap { $0.split(separator: " ").dropFirst(3).first }.flatMap { Int($0) }
        #expect((soft ?? 0) >= 2240, "\(started.stdout)")
        #expect(started.stdout.contains("listening on"), "\(started.stdout)")
    }

    @Test("a signature size under 8 bytes is accepted (imgproxy's range) with a warning line at start")
    func shortSignatureWarns() async throws {
        let taken = try ConnectionCounter()
        let environment = Self.environment.merging(["IMAGE_ENGINE_SIGNATURE_SIZE": "1"]) { $1 }
        // A port in use ends the run right after the configuration is read.
        let outcome = try await CLIRunner.run(["serve", "--bind", "127.0.0.1:\(taken.port)"], environment: environment)
        #expect(
            outcome.stderr.hasPrefix("image-engine: warning: IMAGE_ENGINE_SIGNATURE_SIZE=1: a signature of 1 byte(s) is forged in about 2^7 tries"))
        let full = try await CLIRunner.run(["serve", "--bind", "127.0.0.1:\(taken.port)"], environment: Self.environment)
        #expect(!full.stderr.contains("warning"))
    }

    @Test("a port in use: exit 1 with one line saying so")
    func portInUse() async throws {
        let taken = try ConnectionCounter()
        let outcome = try await CLIRunner.run(["serve", "--bind", "127.0.0.1:\(taken.port)"], environment: Self.environment)
        #expect(outcome.status == 1)
        #expect(outcome.stderr == "image-engine: cannot listen: the port is in use (127.0.0.1:\(taken.port))\n")
    }

    @Test("SIGTERM: /ready turns 503 at once, the request in flight finishes with its image, the process exits 0")
    func gracefulShutdown() async throws {
        let origin = try await ImageServer.start()
        origin.serve("/kite.jpg", ImageServer.Resource(data: try SmallPhotos.data("kite.jpg")))
        let cache = try TemporaryDirectory()
        let serve = try ServeProcess([
            "--bind", "127.0.0.1:0", "--metrics-bind", "127.0.0.1:0", "--allow-private-sources", "--json-log",
            "--cache-dir", cache.url.path, "--shutdown-timeout", "30"
        ])
        let port = try await serve.port()
        let metricsPort = try await serve.port(metrics: true)
        let base = "http://127.0.0.1:\(port)"
        let signed = try await CLIRunner.run(
            ["sign", origin.url("kite.jpg").absoluteString, "--options", "rs:fill:100:100"], environment: Self.environment)
        let path = signed.stdout.trimmingCharacters(in: .newlines)
        #expect(try await Self.get(base + "/ready").status == 200)

        origin.hold("/kite.jpg")
        let inFlight = Task { try await Self.get(base + path) }
        #expect(await pollUntil { origin.statistics.requests == 1 })
        serve.signal(SIGTERM)
        // The metrics listener stays up until the service's requests are done, and shows the drain.
        var drained = false
        for _ in 0..<500 where !drained {
            let ready = try? await Self.get(base + "/ready")
            drained = ready == nil || ready?.status == 503
            if !drained { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(drained, "after SIGTERM /ready is 503 or the listener is closed")
        let metrics = try await Self.get("http://127.0.0.1:\(metricsPort)/metrics")
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("image_engine_requests_in_progress 1"))
        origin.release("/kite.jpg")
        let reply = try await inFlight.value
        #expect(reply.status == 200)
        #expect(try ImageDecoder().decode(reply.body).width == 100)
        #expect(try await serve.exitStatus() == 0)
        #expect(serve.stderr.hasSuffix("image-engine: stopped\n"), "\(serve.stderr)")
        // One JSON line per request on stdout.
        let lines = serve.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.contains { $0["path"] as? String == path && $0["status"] as? Int == 200 && $0["cache"] as? String == "origin" })
        await origin.stop()
    }

    @Test("--auto-webp and --fast-shrink-on-load: WebP for a client that names it, with Vary: Accept; JPEG for one that does not")
    func formatFlags() async throws {
        let origin = try await ImageServer.start()
        origin.serve("/kite.jpg", ImageServer.Resource(data: try SmallPhotos.data("kite.jpg")))
        let serve = try ServeProcess([
            "--bind", "127.0.0.1:0", "--metrics-bind", "127.0.0.1:0", "--allow-private-sources", "--auto-webp", "--fast-shrink-on-load"
        ])
        let base = "http://127.0.0.1:\(try await serve.port())"
        let signed = try await CLIRunner.run(
            ["sign", origin.url("kite.jpg").absoluteString, "--options", "rs:fit:100:100"], environment: Self.environment)
        let path = signed.stdout.trimmingCharacters(in: .newlines)
        let webp = try await Self.get(base + path, accept: "image/webp,*/*")
        let jpeg = try await Self.get(base + path, accept: "*/*")
        #expect(webp.headers["content-type"] == "image/webp" && webp.headers["vary"] == "Accept")
        #expect(jpeg.headers["content-type"] == "image/jpeg" && jpeg.headers["vary"] == "Accept")
        #expect(try ImageDecoder().decode(webp.body).width == 100)
        #expect(webp.headers["etag"]?.isEmpty == false && webp.headers["etag"] != jpeg.headers["etag"])
        serve.signal(SIGTERM)
        #expect(try await serve.exitStatus() == 0)
        await origin.stop()
    }

    /// A 60 MiB JPEG: a small photo with APP15 segments of padding (`fill` makes each source's
    /// bytes its own), so the download is big and the decode small.
    static func paddedJPEG(fill: UInt8) throws -> Data {
        let photo = try SmallPhotos.data("grey.jpg")
        var padding = Data()
        let segment = Data([0xFF, 0xEF, 0xFF, 0xFF]) + Data(repeating: fill, count: 65533)
        while padding.count < 60 << 20 { padding += segment }
        return photo.prefix(2) + padding + photo.dropFirst(2)
    }

    @Test("sources of 60 MiB from many clients: serve stays under --max-memory plus a stated constant; what does not fit is 429")
    func memoryBudget() async throws {
        let origin = try await ImageServer.start()
        let count = 12
        for index in 0..<count { origin.serve("/big-\(index).jpg", .init(data: try Self.paddedJPEG(fill: UInt8(index)))) }
        let budget = 192 << 20
        let serve = try ServeProcess([
            "--bind", "127.0.0.1:0", "--unsafe", "--allow-private-sources", "--max-memory", "192MiB", "--max-src-bytes", "64MiB",
            "--memory-cache", "1MiB"
        ])
        let port = try await serve.port()
        let baseline = try #require(serve.peakResidentBytes)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count {
                let path = "/unsafe/w:64/plain/http://127.0.0.1:\(origin.port)/big-\(index).jpg"
                group.addTask { try await Self.get("http://127.0.0.1:\(port)\(path)").status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 429 }, "\(statuses)")
        #expect(statuses.contains(200) && statuses.contains(429), "12 × 60 MiB cannot all fit in 192 MiB at once: \(statuses)")
        // The stated constant: the process before any request, and 64 MiB for everything the
        // budget does not count (the encoder, NIO's buffers, the allocator's slack).
        let peak = try #require(serve.peakResidentBytes)
        print("serve peak RSS \(peak >> 20) MiB, baseline \(baseline >> 20) MiB, budget \(budget >> 20) MiB: \(statuses)")
        #expect(peak <= baseline + budget + (64 << 20), "peak \(peak >> 20) MiB")
        serve.signal(SIGTERM)
        #expect(try await serve.exitStatus() == 0)
        await origin.stop()
    }
}
