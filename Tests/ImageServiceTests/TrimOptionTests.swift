import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `t:` over sockets: the seller's white sweep cut off before the resize, which then sees the
/// product's own size.
@Suite("Service: trim", .timeLimit(.minutes(2)))
struct TrimOptionTests {
    /// A 900×450 near-white sweep with a 150 wide, 300 tall checkered product whose left edge is
    /// at x = 600 and top at y = 100.
    static func sweep() throws -> Data {
        var pixels: [UInt8] = []
        for y in 0..<450 {
            for x in 0..<900 {
                let inside = (600..<750).contains(x) && (100..<400).contains(y)
                pixels += !inside ? [250, 250, 248] : (x / 10 + y / 10) % 2 == 0 ? [200, 60, 20] : [90, 30, 120]
            }
        }
        return try ImageEncoder.png(try Bitmap(width: 900, height: 450, format: .rgb, pixels: pixels))
    }

    @Test("t: cuts the sweep; the resize, rt:auto and equal sides follow the product; keys differ; bad arguments are 400")
    func trim() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.serve("/sweep.png", .init(data: try Self.sweep(), contentType: "image/png"))
        let cases: [(String, width: Int, height: Int)] = [
            ("t:10", 150, 300),
            ("t:10:fafaf8", 150, 300),
            // The corner's colour within 2: nothing is background at 1.
            ("t:1:ffffff", 900, 450),
            // 150 from the right, 600 from the left: both lose 150; 50 above and below.
            ("t:10::1:1", 600, 350),
            ("t:10/rs:fit:100:100", 50, 100),
            // The trimmed product is portrait like the box: auto fills it. Untrimmed (landscape)
            // it fits, which would make the product 75×150.
            ("t:10/rs:auto:100:150", 100, 150),
            ("rs:auto:100:150", 100, 50),
            ("t:10/rot:90", 300, 150),
            ("t:", 900, 450)
        ]
        var etags: Set<String> = []
        for (options, width, height) in cases {
            let reply = try await harness.get(harness.path(options, harness.source("sweep.png"), ext: "png"))
            #expect(reply.status == 200, "\(options): \(reply.status)")
            guard reply.status == 200 else { continue }
            let image = try ImageDecoder().decode(reply.body)
            #expect((image.width, image.height) == (width, height), "\(options): \(image.width)×\(image.height)")
            // Corners are the product's, not the sweep's, once trimmed to it.
            if (width, height) == (150, 300) {
                #expect(image.pixel(x: 0, y: 0).first != 250 && image.pixel(x: 149, y: 299).first != 250, "\(options)")
            }
            etags.insert(reply.header("ETag") ?? "")
        }
        // `t:` without a threshold is no trim: the same answer as no option at all.
        let plain = try await harness.get(harness.path("", harness.source("sweep.png"), ext: "png"))
        #expect(etags.count == cases.count && etags.contains(plain.header("ETag") ?? "-"))
        for bad in ["t:256", "t:-1", "t:abc", "t:10:fff", "t:10:ffffff:2", "t:10:ffffff:1:1:1"] {
            let reply = try await harness.get(harness.path(bad, harness.source("sweep.png")))
            #expect(reply.status == 400 && String(decoding: reply.body, as: UTF8.self).contains("t"), "\(bad): \(reply.status)")
        }
        await harness.stop()
    }
}
