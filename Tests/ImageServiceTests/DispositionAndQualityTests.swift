import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `fn`, `att` and `fq` over sockets: the `Content-Disposition` a browser reads, and the
/// quality each format is encoded at when the URL names none.
@Suite("Service: file name, attachment, format quality", .timeLimit(.minutes(2)))
struct DispositionAndQualityTests {
    @Test("Content-Disposition: inline with the source's name by default, attachment and fn's name on request, UTF-8 names encoded")
    func contentDisposition() async throws {
        let harness = try await ServiceHarness.start()
        let cases: [(String, String?, String)] = [
            ("w:50", nil, "inline; filename=\"kite.jpg\""),
            ("w:50/f:webp", nil, "inline; filename=\"kite.webp\""),
            ("w:50/fn:product-42/att:1", nil, "attachment; filename=\"product-42.jpg\""),
            ("w:50/fn:cHJvZHVjdC3wn5GX:1", nil, "inline; filename=\"product-_.jpg\"; filename*=UTF-8''product-%F0%9F%91%97.jpg"),
            ("w:50/fn:YSJi:1", nil, "inline; filename=\"a_b.jpg\"; filename*=UTF-8''a%22b.jpg")
        ]
        for (options, ext, expected) in cases {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg"), ext: ext))
            #expect(
                reply.status == 200 && reply.header("Content-Disposition") == expected,
                "\(options): \(String(describing: reply.header("Content-Disposition")))")
        }
        await harness.stop()
    }

    @Test("fq sets the quality of the format chosen when q is absent: fewer bytes, another ETag; q wins over it")
    func formatQuality() async throws {
        let harness = try await ServiceHarness.start()
        func get(_ options: String) async throws -> ServiceHarness.Reply {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 200, "\(options)")
            return reply
        }
        let standard = try await get("w:200")
        let low = try await get("w:200/fq:jpeg:30:webp:90")
        #expect(low.body.count < standard.body.count * 3 / 4 && low.header("ETag") != standard.header("ETag"))
        let explicit = try await get("w:200/q:30")
        #expect(low.body == explicit.body, "fq:jpeg:30 makes what q:30 makes")
        let overridden = try await get("w:200/q:80/fq:jpeg:30")
        #expect(overridden.body == (try await get("w:200/q:80")).body, "q wins over fq")
        let webpLow = try await get("w:200/f:webp/fq:webp:20")
        let webpDefault = try await get("w:200/f:webp")
        #expect(webpLow.body.count < webpDefault.body.count)
        await harness.stop()
    }
}
