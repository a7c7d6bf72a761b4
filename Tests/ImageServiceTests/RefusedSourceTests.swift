import Foundation
import ImageServer
@testable import ImageService
import Testing
import TestSupport

/// Sources the service must never connect to without `--allow-private-sources`: each is asked
/// for over HTTP, answered 404, and a listener on the address counts zero connections.
@Suite("Service: refused sources over HTTP", .timeLimit(.minutes(2)))
struct RefusedSourceTests {
    static func refusedURLs(port: UInt16) -> [String] {
        [
            "http://127.0.0.1:\(port)/a.jpg", "http://localhost:\(port)/a.jpg", "http://[::1]:\(port)/a.jpg", "http://0.0.0.0:\(port)/a.jpg",
            "http://127.1:\(port)/a.jpg", "http://2130706433:\(port)/a.jpg", "http://[::ffff:127.0.0.1]:\(port)/a.jpg",
            "http://0x7f000001:\(port)/a.jpg", "https://127.0.0.1:\(port)/a.jpg", "http://169.254.169.254/latest/meta-data/",
            "file:///etc/passwd", "ftp://127.0.0.1:\(port)/a.jpg"
        ]
    }

    @Test("loopback in every spelling, cloud metadata, file: and ftp: are refused with 404 and never connected to")
    func refusedAddresses() async throws {
        let counter = try ConnectionCounter()
        let harness = try await ServiceHarness.start()
        for url in Self.refusedURLs(port: counter.port) {
            for plain in [false, true] {
                // Refused before any connection attempt: the counter below sees none (a time
                // bound here would only measure how busy the machine is).
                let reply = try await harness.get(harness.path("w:10", url, plain: plain))
                #expect(
                    reply.status == 404 && reply.text.hasPrefix("source not allowed: ") && reply.header("Cache-Control") == "no-store",
                    "\(url): \(reply.status) \(reply.text)")
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(counter.connections == 0)
        await harness.stop()
    }

    @Test("a redirect from an allowed origin to a refused address is refused, and not followed")
    func redirectToRefused() async throws {
        let counter = try ConnectionCounter()
        let harness = try await ServiceHarness.start()
        for (index, target) in [
            "http://127.0.0.1:\(counter.port)/a.jpg", "http://localhost:\(counter.port)/a.jpg",
            "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"
        ].enumerated() {
            harness.origin.setFault("/hop-\(index).jpg", .redirect(status: 302 + (index % 2) * 5, location: target))
            let reply = try await harness.get(harness.path("w:10", harness.source("hop-\(index).jpg")))
            #expect(reply.status == 404, "\(target): \(reply.status) \(reply.text)")
            #expect(harness.origin.requests("/hop-\(index).jpg") == 1)
        }
        // A redirect within the allowed origin is followed.
        harness.origin.setFault("/moved.jpg", .redirect(status: 301, location: "/kite.jpg"))
        #expect(try await harness.get(harness.path("w:10", harness.source("moved.jpg"))).status == 200)
        try await Task.sleep(for: .milliseconds(100))
        #expect(counter.connections == 0)
        await harness.stop()
    }

    @Test("with --allow-private-sources the same loopback source is connected to (the counter counts)")
    func allowedWhenAsked() async throws {
        let counter = try ConnectionCounter()
        let harness = try await ServiceHarness.start { $0.sourcePolicy.allowsPrivateAddresses = true }
        let reply = try await harness.get(harness.path("w:10", "http://127.0.0.1:\(counter.port)/a.jpg"))
        #expect(reply.status == 502, "the counter closes every connection at once")
        #expect(counter.connections >= 1)
        await harness.stop()
    }

    @Test("cloud metadata stays refused with --allow-private-sources alone; --allow-link-local-sources opens it")
    func linkLocal() async throws {
        let harness = try await ServiceHarness.start { $0.sourcePolicy.allowsPrivateAddresses = true }
        let metadata = try await harness.get(harness.path("w:10", "http://169.254.169.254/latest/meta-data/iam.jpg"))
        // 404 from the policy, not the 502 or 504 an attempted connection would give.
        #expect(metadata.status == 404 && metadata.text.contains("not allowed"), "\(metadata.status) \(metadata.text)")
        await harness.stop()
    }
}
