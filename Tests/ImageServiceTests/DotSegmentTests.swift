import Foundation
@testable import ImageService
import Testing

/// The threat model's "shared-cache keys" row: a path the service answers is a fixed point of
/// every cache's normalisation, so no signed URL can be stored under another one's key. The
/// same attack through real nginx is `scripts/cluster-smoke.sh`'s.
@Suite("Service: paths no cache can rewrite")
struct DotSegmentTests {
    static let climbing = [
        "/s/w:10/plain/http://a.example/x/../../../victim/w:10/plain/http://b.example/v.jpg",
        "/s/w:10/plain/http://a.example/x/%2E%2E/y.jpg",
        "/s/w:10/plain/http://a.example/x/%2e./y.jpg",
        "/s/w:10/plain/http://a.example/x/.%2E/y.jpg",
        "/s/w:10/plain/http://a.example/x%2F..%2Fy.jpg",
        "/s/w:10/plain/http://a.example/x%2f..%2fy.jpg",
        "/s/w:10/plain/http://a.example/x%5C..%5Cy.jpg",
        "/s/w:10/plain/http://a.example/x\\..\\y.jpg",
        "/s/w:10/plain/http://a.example/./y.jpg",
        "/s/w:10/plain/http://a.example/x/..",
        "/s/./w:10/aHR0cDovL2EuZXhhbXBsZS95LmpwZw.jpg",
        "/s/%2E%2E/w:10/aHR0cDovL2EuZXhhbXBsZS95LmpwZw.jpg",
        "/.."
    ]

    static let plain = [
        "/s/w:10/plain/http://a.example/x.y/..z/.a/a../.../y.jpg",
        "/s/w:10/plain/http://a.example/x/%2E%2E%2E/y.jpg",
        // Decoded once, as nginx does: %252E is "%2E" there, no dot segment.
        "/s/w:10/plain/http://a.example/x/%252E%252E/y.jpg",
        "/s/w:10/aHR0cDovL2EuZXhhbXBsZS95LmpwZw.jpg",
        "/s/w:10/plain/http://a.example/x%2/y%"
    ]

    @Test("a . or .. segment is found however it is spelled (%2E, %2F, %5C, \\), and no other dots are")
    func spellings() {
        for path in Self.climbing { #expect(URLSigner.dotSegment(in: path) != nil, "\(path)") }
        for path in Self.plain { #expect(URLSigner.dotSegment(in: path) == nil, "\(path)") }
    }

    @Test("such a path is answered 400 before its signature is checked, valid or not, and nothing is fetched")
    func refusedBeforeSignature() async throws {
        let harness = try await ServiceHarness.start()
        let signer = URLSigner(keys: [ServiceHarness.documentationKey])
        for path in Self.climbing {
            // After the first segment, signed as the attacker would sign it (the signer itself
            // refuses to, below).
            let unsigned = path.dropFirst().firstIndex(of: "/").map { String(path[$0...]) }
            let signed = unsigned.map { "/" + URLSigner.signature(of: $0, key: ServiceHarness.documentationKey) + $0 }
            for candidate in [path] + (signed.map { [$0] } ?? []) {
                let reply = await harness.service.respond(to: ServiceRequest(path: candidate))
                #expect(reply.status == 400, "\(candidate): \(reply.status)")
                #expect(String(decoding: reply.body, as: UTF8.self).contains("segment"), "\(candidate)")
            }
        }
        #expect(harness.origin.statistics.requests == 0, "a refused path touched the origin")
        // The signer makes no such path: a plain source with one is refused, base64 is fine.
        let source = harness.source("kite.jpg").replacingOccurrences(of: "/kite.jpg", with: "/x/../kite.jpg")
        #expect(signer.signedPath(options: "w:10", source: source, plain: true) == nil)
        let base64 = try #require(signer.signedPath(options: "w:10", source: source))
        #expect(URLSigner.dotSegment(in: base64) == nil)
        await harness.stop()
    }
}
