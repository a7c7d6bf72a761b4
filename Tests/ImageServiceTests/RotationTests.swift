import Foundation
import ImageCodec
import ImageServer
import Testing
import TestSupport

@testable import ImageService

/// `rot:` and `ar:` over sockets: sizes in the rotated frame, and pixels that are the unrotated
/// render turned clockwise.
@Suite("Service: rotate and auto-rotate", .timeLimit(.minutes(2)))
struct RotationTests {
    static func meanError(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.format == b.format)
        return Double(zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.pixels.count)
    }

    @Test("rot:90 of the 480×300 kite at w:150 is 150×240 and is the 240×150 render turned clockwise; fill keeps the rotated top")
    func quarterTurns() async throws {
        let harness = try await ServiceHarness.start()
        func image(_ options: String) async throws -> Bitmap { try await harness.image(options + "/f:png") }
        let turned = try await image("w:150/rot:90")
        #expect(turned.width == 150 && turned.height == 240)
        let plain = try await image("w:240")
        let turnedLocally = try plain.applying(.right)
        #expect(Self.meanError(turned, turnedLocally) < 0.5, "\(Self.meanError(turned, turnedLocally))")
        let half = try await image("w:240/rot:180")
        #expect(try Self.meanError(half, plain.applying(.down)) < 0.5)
        // The rotated top is the source's left edge.
        let filled = try await image("rs:fill:100:50/g:no/rot:90")
        let reference = try await image("rs:fill:50:100/g:we")
        #expect(try filled.width == 100 && filled.height == 50 && Self.meanError(filled, reference.applying(.right)) < 0.5)
        let other = try await image("rs:fill:50:100/g:ea")
        #expect(try Self.meanError(filled, other.applying(.right)) > 5, "the other edge is another image")
        await harness.stop()
    }

    @Test("ar:0 keeps the stored landscape of a photo with EXIF orientation 6; the default turns it upright, a portrait")
    func autoRotate() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.serve(
            "/kite6.webp", ImageServer.Resource(data: try WebPFixtures.data("kite-orientation6.webp"), contentType: "image/webp"))
        func image(_ options: String) async throws -> Bitmap { try await harness.image(options, "kite6.webp") }
        let upright = try await image("w:100/f:png")
        let stored = try await image("w:100/f:png/ar:0")
        // Stored landscape, shown (orientation 6: a quarter turn clockwise) as a portrait.
        #expect(upright.width == 100 && upright.height > 100, "\(upright.width)×\(upright.height)")
        #expect(stored.width == 100 && stored.height < 100, "\(stored.width)×\(stored.height)")
        await harness.stop()
    }
}
