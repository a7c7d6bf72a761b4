import Foundation
import ImageCodec
import Logging
import ServiceLifecycle
import ImageServer
@testable import ImageService
import Testing
import TestSupport

/// Client connections over raw sockets: a half-closed client still gets its answer, a gone one
/// is 499, a GET with a body is refused, and a stalled log never holds a request.
@Suite("Service: connections", .timeLimit(.minutes(2)))
struct ServiceConnectionTests {
    @Test("a client that half-closes after its request is answered (after a 103 probe); one that closes is 499")
    func halfCloseAndDisconnect() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate) { $0.workers = 1 }
        let halfClosed = try RawConnection(port: harness.port, path: harness.path("w:70", harness.source("kite.jpg")))
        #expect(await gate.waitForArrivals(1))
        halfClosed.shutdownWrite()
        // The probe's interim response shows the server saw the input end and kept the work.
        gate.open()
        let answer = await halfClosed.answer()
        #expect(answer.hasPrefix("HTTP/1.1 103"), "\(answer.prefix(200))")
        #expect(answer.contains("HTTP/1.1 200"), "\(answer.prefix(300))")

        let closing = Gate()
        let second = try await ServiceHarness.start(gate: closing) { $0.workers = 1 }
        let gone = try RawConnection(port: second.port, path: second.path("w:70", second.source("ladybird.jpg")))
        #expect(await closing.waitForArrivals(1))
        gone.close()
        #expect(await pollUntil(timeout: .seconds(20)) { second.service.renders.count == 0 })
        closing.open()
        #expect(await pollUntil(timeout: .seconds(20)) { second.logLines.records.contains { ($0["status"] as? Double) == 499 } })
        let samples = try await second.metricSamples()
        #expect(samples["image_engine_requests_total{status=\"499\"}"] == 1 && samples["image_engine_requests_total{status=\"503\"}"] == nil)
        await harness.stop()
        await second.stop()
    }

    @Test("a GET announcing a body is 400 and its connection closed; an endless chunked body does not keep it")
    func getWithBody() async throws {
        let harness = try await ServiceHarness.start()
        let path = harness.path("w:70", harness.source("kite.jpg"))
        let chunked = try RawConnection(
            port: harness.port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        // Chunks keep coming: more than the watcher lets a GET send.
        for _ in 0..<20 { try? chunked.send("1000\r\n" + String(repeating: "x", count: 4096) + "\r\n") }
        let answer = await chunked.answer()
        #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
        #expect(harness.origin.statistics.requests == 0)
        await harness.stop()
    }

    @Test("an error answer to a request with a body closes the connection: the unread body is never read as a request")
    func errorWithBodyCloses() async throws {
        let harness = try await ServiceHarness.start()
        let path = harness.path("w:70", harness.source("kite.jpg"))
        for request in [
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
            "POST /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\n\r\nhello world"
        ] {
            let connection = try RawConnection(port: harness.port, request: request)
            // At once, not at the read deadline (10 + 10 s), which would close it too.
            let answer = await connection.answer(timeout: .seconds(5))
            #expect(answer.hasPrefix("HTTP/1.1 400") || answer.hasPrefix("HTTP/1.1 405"), "\(answer.prefix(120))")
            #expect(connection.serverClosed, "the connection stayed open after \(answer.prefix(12))")
        }
        await harness.stop()
    }

    @Test("bodies trickled after their answer are cut at the read deadline, and /health is answered while they held every slot")
    func trickledBodies() async throws {
        let harness = try await ServiceHarness.start(server: {
            $0.maximumConnections = 4
            $0.idleTimeout = .seconds(1)
            $0.requestReadTimeout = .seconds(1)
        })
        // Every connection slot held by a client that announces a large body and sends a byte of
        // it every 200 ms: each part restarts the idle timer, and the 400 that answers it at
        // once leaves the connection reading (lingering) — only the read deadline ends them.
        let head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n"
        let clients = try (0..<4).map { _ in try RawConnection(port: harness.port, request: head) }
        let trickle = Task.detached {
            for _ in 0..<150 where !Task.isCancelled {
                for client in clients { try? client.send("x") }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        // Answered once the deadline freed the slots; without it, not before the 30 s trickle
        // ends (a generous bound: a busy machine may delay the answer, not by 20 s).
        let started = ContinuousClock.now
        let health = try await harness.get("/health")
        #expect(health.status == 200 && ContinuousClock.now - started < .seconds(20), "\(ContinuousClock.now - started)")
        trickle.cancel()
        await trickle.value
        for client in clients {
            _ = await client.answer(timeout: .seconds(1))
            #expect(client.serverClosed)
        }
        await harness.stop()
    }

    @Test("a full listener closes a connection that waits: slowloris heads, trickled bodies and idle keep-alives never lock out /health")
    func sheddingWaitingConnections() async throws {
        let harness = try await ServiceHarness.start(server: {
            $0.maximumConnections = 4
            // Long enough that no deadline frees a slot during the test: only shedding can.
            $0.idleTimeout = .seconds(60)
            $0.requestReadTimeout = .seconds(60)
        })
        // In the order they connect, each holding a slot in a different way: a keep-alive
        // connection after its answer, two heads that never end, a body trickled after its 400.
        func healthAnswers() -> Int { harness.logLines.records.filter { ($0["path"] as? String) == "/health" }.count }
        let keepAlive = try RawConnection(port: harness.port, request: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(await pollUntil(timeout: .seconds(30)) { healthAnswers() == 1 }, "the keep-alive request was not answered")
        let heads = try (0..<2).map { _ in try RawConnection(port: harness.port, request: "GET /health HTTP/1.1\r\nHost: 12") }
        let body = try RawConnection(
            port: harness.port, request: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\nx")
        // Every slot is held by a client without a request in progress, and the deadlines are a
        // minute away: /health gets a slot at once, and so does the next (each on a connection
        // of its own).
        for attempt in 2...3 {
            let health = try RawConnection(port: harness.port, request: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answer = await health.answer(timeout: .seconds(30))
            #expect(answer.hasPrefix("HTTP/1.1 200"), "/health was not answered while waiting clients held every slot (\(attempt))")
            #expect(healthAnswers() == attempt)
        }
        // Room was made by closing waiting connections (which ones depends on when each
        // answer's end was written: ConnectionShedderTests pins the order down).
        var closed = 0
        for connection in [keepAlive] + heads + [body] {
            _ = await connection.answer(timeout: .seconds(1))
            if connection.serverClosed { closed += 1 }
        }
        #expect(closed >= 1)
        body.close()
        await harness.stop()
    }

    @Test("a client that never reads its answer loses the connection at the write deadline, and the slot it held serves /health")
    func responseWriteDeadline() async throws {
        let harness = try await ServiceHarness.start(server: {
            $0.maximumConnections = 1
            // Long enough that only the write deadline can end the stalled connection.
            $0.idleTimeout = .seconds(60)
            $0.requestReadTimeout = .seconds(60)
            $0.responseWriteTimeout = .seconds(1)
        })
        // Noise does not compress: a 2000² PNG answer is 12 MB, more than the kernel buffers
        // between the server and a client whose receive window is 4 KiB (at most the 4 MB
        // tcp_wmem ceiling on the server's side).
        var generator = SeededGenerator()
        let noise = try Bitmap(
            width: 2000, height: 2000, format: .rgb, pixels: (0..<12_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        harness.origin.serve(
            "/noise.png",
            ImageServer.Resource(data: try ImageEncoder.png(noise, options: PNGEncodingOptions(compressionLevel: 1)), contentType: "image/png"))
        let path = harness.path("f:png", harness.source("noise.png"))
        let stalled = try RawConnection(
            port: harness.port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", receiveBuffer: 4096)
        // Its answer is rendered and being written (logged as it is handed to the server).
        #expect(await pollUntil(timeout: .seconds(30)) { harness.logLines.records.contains { ($0["path"] as? String) == path } })
        // The only connection slot is the stalled client's until the write deadline closes it.
        let health = Task { try await harness.get("/health") }
        let answered = await pollUntil(timeout: .seconds(30)) {
            harness.logLines.records.contains { ($0["path"] as? String) == "/health" }
        }
        #expect(answered, "/health was not answered while the stalled client held the only slot")
        if answered { #expect(try await health.value.status == 200) } else { health.cancel() }
        // Reading now: what the kernel buffers held, then the close; never the whole answer.
        let received = await stalled.answer(timeout: .seconds(10))
        #expect(received.hasPrefix("HTTP/1.1 200"), "\(received.prefix(120))")
        #expect(stalled.serverClosed && stalled.receivedBytes < 12_000_000, "\(stalled.receivedBytes) bytes; \(generator.replay)")
        await harness.stop()
    }

    /// A PNG of noise of `side`² (it does not compress: about 3 bytes a pixel), served at /noise-`side`.png.
    private func noise(_ side: Int, on harness: ServiceHarness) throws -> String {
        var generator = SeededGenerator(seed: UInt64(side))
        let pixels = (0..<side * side * 3).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let bitmap = try Bitmap(width: side, height: side, format: .rgb, pixels: pixels)
        harness.origin.serve(
            "/noise-\(side).png",
            ImageServer.Resource(data: try ImageEncoder.png(bitmap, options: PNGEncodingOptions(compressionLevel: 1)), contentType: "image/png"))
        return harness.path("skp:png", harness.source("noise-\(side).png"))
    }

    @Test("a client reading slowly gets its whole answer: only the write deadline ends an answer, never the keep-alive timer")
    func slowReaderGetsEverything() async throws {
        let harness = try await ServiceHarness.start(server: {
            $0.idleTimeout = .seconds(1)
            $0.responseWriteTimeout = .seconds(60)
        })
        let path = try noise(1400, on: harness)
        let size = try await harness.get(path).body.count
        // More than the kernel's buffers hold (tcp_wmem's 4 MB ceiling): the rest waits in the
        // connection, which a timer that ignores the answer would close.
        #expect(size > 5 << 20, "the premise: \(size) bytes take several idle timeouts to read")
        let reader = try RawConnection(port: harness.port, request: "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n", receiveBuffer: 16 << 10)
        // About 650 kB/s: 32 KiB every 50 ms, several seconds for the answer.
        let read = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: reader.readSlowly(size + 200, chunk: 32 << 10, pause: .milliseconds(50), timeout: .seconds(60))) }
                .start()
        }
        #expect(read > size, "\(read) bytes of a \(size)-byte answer and its head")
        reader.close()
        await harness.stop()
    }

    @Test("clients that stop reading large answers are shed like idle ones: six under a cap of four never lock /health out")
    func stalledReadersAreShed() async throws {
        let harness = try await ServiceHarness.start(server: {
            $0.maximumConnections = 4
            // Long: only the shedding can make room.
            $0.idleTimeout = .seconds(60)
            $0.requestReadTimeout = .seconds(60)
            $0.responseWriteTimeout = .seconds(60)
        })
        let path = try noise(1200, on: harness)
        var stalled: [RawConnection] = []
        for _ in 0..<6 {
            stalled.append(try RawConnection(port: harness.port, request: "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n", receiveBuffer: 4096))
            try await Task.sleep(for: .milliseconds(100))
        }
        // Each /health is answered within 2 s, while the stalled readers keep arriving. Each
        // probe has a connection of its own, as a load balancer's has: a kept-alive one waits
        // between probes, so the shedder may close it (as RFC 9112 §9.3.1 lets a server), and a
        // pooled client that sends on it as it closes sees "I/O on closed channel".
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let probe = try RawConnection(port: harness.port, request: "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let answer = await probe.answer(timeout: .seconds(10))
            #expect(
                answer.hasPrefix("HTTP/1.1 200") && ContinuousClock.now - started < .seconds(2),
                "\(ContinuousClock.now - started): \(answer.prefix(80))")
            probe.close()
        }
        for connection in stalled { connection.close() }
        await harness.stop()
    }

    @Test("the metrics listener closes idle connections and caps how many it holds: /metrics is still answered")
    func metricsListener() async throws {
        let harness = try await ServiceHarness.start(server: { $0.idleTimeout = .seconds(1) })
        // More idle connections than the listener holds at once.
        let idle = try (0...ThumbnailServer.maximumMetricsConnections).map { _ in
            try RawConnection(port: harness.metricsPort, request: "")
        }
        let metrics = try await harness.get("/metrics", metrics: true)
        #expect(metrics.status == 200 && metrics.text.contains("image_engine_requests_in_progress"))
        for connection in idle {
            _ = await connection.answer(timeout: .seconds(5))
            #expect(connection.serverClosed, "an idle connection to /metrics stayed open")
        }
        await harness.stop()
    }

    @Test("a running instance reports its disk caches' size and entries on /metrics, as cache stats would")
    func diskCacheMetrics() async throws {
        let harness = try await ServiceHarness.start(diskCache: true)
        let made = try await harness.get(harness.path("w:70", harness.source("kite.jpg")))
        #expect(made.status == 200)
        await harness.service.flush()
        let metrics = try await harness.get("/metrics", metrics: true).text
        func value(_ name: String, _ cache: String) -> Double? {
            metrics.split(separator: "\n").first { $0.hasPrefix("\(name){cache=\"\(cache)\"}") }
                .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        }
        for cache in ["results", "sources"] {
            #expect(value("image_engine_disk_cache_entries", cache) == 1, "\(cache): \(metrics)")
            #expect((value("image_engine_disk_cache_bytes", cache) ?? 0) > 0)
            #expect((value("image_engine_disk_cache_limit_bytes", cache) ?? 0) >= Double(1 << 20))
        }
        // The result's entry holds at least the answer's bytes.
        #expect(try #require(value("image_engine_disk_cache_bytes", "results")) >= Double(made.body.count))
        await harness.stop()
    }

    @Test("ThumbnailServer.services in a group of one's own: the same guards, and SIGTERM-style shutdown drains")
    func embeddedServices() async throws {
        let service = try ThumbnailService(configuration: ThumbnailService.Configuration(keys: [], requiresSignature: false))
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: ThumbnailServer.services(
                    serving: service, configuration: ThumbnailServer.Configuration(address: ServerAddress(host: "127.0.0.1", port: 0)),
                    onListening: { continuation.yield($0) }),
                logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let health = try RawConnection(port: port, path: "/health")
        #expect(await health.answer().hasPrefix("HTTP/1.1 200"))
        // The responder's refusal of a GET with a body, and the watcher closing the connection.
        let chunked = try RawConnection(
            port: port, request: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<20 { try? chunked.send("1000\r\n" + String(repeating: "x", count: 4096) + "\r\n") }
        #expect(await chunked.answer().hasPrefix("HTTP/1.1 400"))
        #expect(chunked.serverClosed)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(!service.isReady, "the drain started with the shutdown")
    }

    @Test("a request not answered within --request-timeout is 504, and the service answers the next one")
    func requestDeadline() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate) { $0.requestTimeout = 1 }
        let reply = try await harness.get(harness.path("w:70", harness.source("kite.jpg")))
        #expect(reply.status == 504 && reply.text == "gateway timeout: the request was not answered within 1 s\n", "\(reply.status) \(reply.text)")
        #expect(reply.header("Cache-Control") == "no-store")
        gate.open()
        // Alive: answered at once (an image would need its render within the 1 s deadline too).
        #expect(try await harness.get("/health").status == 200)
        await harness.stop()
    }
}

@Suite("Service: the log never blocks a request", .timeLimit(.minutes(1)))
struct LogSinkTests {
    @Test("with the output stalled (a pipe nobody reads) every write returns, and lines beyond the buffer are dropped and counted")
    func stalledPipe() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let sink = StandardOutputSink(descriptor: ends[1], capacity: 256 << 10)
        // The read end first, so the writing thread's blocked write fails with EPIPE; the write
        // end only once that thread has given up every line: closed while it still writes, its
        // number could be another test's socket or pipe by its next write.
        defer {
            sink.close()
            close(ends[0])
            _ = sink.flush(timeout: .seconds(10))
            close(ends[1])
        }
        let line = Data((String(repeating: "x", count: 1023) + "\n").utf8)
        // 8 MiB: 128 times the pipe's own 64 KiB, far past what it and the buffer hold.
        for _ in 0..<8192 { sink.write(line) }
        #expect(sink.droppedLines > 0)
        #expect(sink.droppedLines <= 8192 - (256 << 10) / line.count)
        // A stopping process does not wait for a stalled output past its timeout.
        #expect(sink.flush(timeout: .milliseconds(100)) == false)
    }

    @Test("flush returns once every queued line is in the output: a process that exits next loses none")
    func flushWritesEverything() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let sink = StandardOutputSink(descriptor: ends[1])
        defer { sink.close() }
        // 40 000 bytes: within the pipe's 64 KiB, so the writing thread never waits for a reader.
        let lines = (0..<400).map { Data((String(format: "%099d", $0) + "\n").utf8) }
        for line in lines { sink.write(line) }
        #expect(sink.flush(timeout: .seconds(10)))
        // What the pipe holds right after flush, read without waiting for more.
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        #expect(received == lines.reduce(Data(), +))
    }
}
