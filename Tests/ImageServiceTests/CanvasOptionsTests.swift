import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `ex`, `exar`, `pd` and `bg` over sockets: the tiles' sizes and the colour of their corners
/// and edges, decoded from what `serve` answered.
@Suite("Service: extend, padding, background", .timeLimit(.minutes(2)))
struct CanvasOptionsTests {
    static func decoded(_ reply: ServiceHarness.Reply) throws -> Bitmap {
        try ImageDecoder().decode(reply.body)
    }

    /// Within JPEG's error of `colour`.
    static func near(_ pixel: ArraySlice<UInt8>, _ colour: [UInt8], tolerance: Int = 6) -> Bool {
        zip(pixel, colour).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    @Test("the marketplace tile: a landscape photo fitted to 100×100, extended on white, square with white corners and the photo across")
    func whiteSquareTile() async throws {
        let harness = try await ServiceHarness.start()
        for options in ["rs:fit:100:100/ex:1/bg:255:255:255", "rs:fit:100:100:0:1/bg:ffffff", "rs:fit:100:100:0:1"] {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 200, "\(options)")
            let tile = try Self.decoded(reply)
            #expect(tile.width == 100 && tile.height == 100, "\(options): \(tile.width)×\(tile.height)")
            for (x, y) in [(0, 0), (99, 0), (0, 99), (99, 99), (50, 1), (50, 98)] {
                #expect(Self.near(tile.pixel(x: x, y: y), [255, 255, 255]), "\(options) (\(x), \(y)): \(Array(tile.pixel(x: x, y: y)))")
            }
            #expect(!Self.near(tile.pixel(x: 50, y: 50), [255, 255, 255], tolerance: 30), "\(options): the photo is in the middle")
        }
        await harness.stop()
    }

    @Test("padding in a colour adds its pixels around the fit; exar to PNG is square with transparent corners")
    func paddingAndAspectRatio() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try Self.decoded(try await harness.get(harness.path("rs:fit:100:100", harness.source("kite.jpg"))))
        let padded = try Self.decoded(try await harness.get(harness.path("rs:fit:100:100/pd:10:5/bg:ff0000", harness.source("kite.jpg"))))
        #expect(padded.width == plain.width + 10 && padded.height == plain.height + 20)
        for (x, y) in [(0, 0), (padded.width - 1, padded.height - 1), (2, padded.height / 2), (padded.width / 2, 4)] {
            #expect(Self.near(padded.pixel(x: x, y: y), [255, 0, 0], tolerance: 40), "(\(x), \(y)): \(Array(padded.pixel(x: x, y: y)))")
        }
        let reply = try await harness.get(harness.path("rs:fit:100:100/exar:1/f:png", harness.source("kite.jpg")))
        #expect(reply.status == 200 && reply.header("Content-Type") == "image/png")
        let square = try Self.decoded(reply)
        #expect(square.width == 100 && square.height == 100 && square.format == .rgba)
        #expect(square.pixel(x: 0, y: 0).last == 0 && square.pixel(x: 50, y: 50).last == 255)
        await harness.stop()
    }

    @Test("spellings of one tile share an ETag; a padded output past the longest side is a 400 naming it")
    func keysAndBounds() async throws {
        let harness = try await ServiceHarness.start()
        let one = try await harness.get(harness.path("rs:fit:80:80/ex:1/bg:255:255:255", harness.source("kite.jpg")))
        let two = try await harness.get(harness.path("resize:fit:80:80:0:1/background:FFFFFF", harness.source("kite.jpg")))
        let other = try await harness.get(harness.path("rs:fit:80:80/ex:1/bg:fffffe", harness.source("kite.jpg")))
        #expect(one.header("ETag") != nil && one.header("ETag") == two.header("ETag") && one.header("ETag") != other.header("ETag"))
        for options in ["rs:fit:8000:8000/pd:200", "pd:9000", "ex:1:sm", "bg:red"] {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 400, "\(options): \(reply.status)")
        }
        // The source (480 px) clamped to --max-output-side, then padded past it.
        let clamped = try await ServiceHarness.start { $0.maxOutputSide = 300 }
        let padded = try await clamped.get(clamped.path("pd:20", clamped.source("kite.jpg")))
        #expect(padded.status == 400 && String(decoding: padded.body, as: UTF8.self).contains("300"))
        await clamped.stop()
        await harness.stop()
    }
}
