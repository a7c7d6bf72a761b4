import Foundation
import ImageCodec
import ImageServer
@testable import ImageService
import Testing
import TestSupport

/// Formats through the service over real sockets: WebP as an output (`f:webp`, `.webp`,
/// `--auto-webp` from `Accept` with `Vary`), WebP, HEIC and AVIF as sources.
@Suite("Service: WebP, HEIC and AVIF", .timeLimit(.minutes(2)))
struct ServiceFormatTests {
    @Test("f:webp and the .webp extension: one WebP result (one decode), at the WebP default quality, without Vary")
    func explicitWebP() async throws {
        let harness = try await ServiceHarness.start()
        let source = harness.source("kite.jpg")
        let option = try await harness.get(harness.path("rs:fill:120:90/f:webp", source))
        let ext = try await harness.get(harness.path("rs:fill:120:90", source, ext: "webp"))
        #expect(option.status == 200 && option.header("Content-Type") == "image/webp" && option.header("Vary") == nil)
        #expect(ext.header("Image-Engine-Cache") == "result-memory" && ext.body == option.body && ext.header("ETag") == option.header("ETag"))
        let bitmap = try ImageDecoder().decode(option.body)
        #expect(try ImageFormat.sniff(option.body) == .webp && (bitmap.width, bitmap.height) == (120, 90))
        // The default (79) and an explicit q:79 are the same pixels but other keys: the default
        // may change under a result, an explicit quality may not.
        let explicit = try await harness.get(harness.path("rs:fill:120:90/f:webp/q:79", source))
        #expect(explicit.body == option.body && explicit.header("ETag") != option.header("ETag"))
        let low = try await harness.get(harness.path("rs:fill:120:90/f:webp/q:20", source))
        #expect(low.body.count < option.body.count)
        #expect(harness.service.statistics.decodes == 3)
        await harness.stop()
    }

    @Test("--auto-webp: Accept picks WebP or JPEG for a URL without a format, both answers say Vary: Accept; an explicit format does not vary")
    func negotiated() async throws {
        let harness = try await ServiceHarness.start { $0.autoWebP = true }
        let source = harness.source("kite.jpg")
        let path = harness.path("rs:fit:100:100", source)
        let browser = try await harness.get(path, headers: [("Accept", "image/avif,image/webp,image/apng,*/*;q=0.8")])
        let old = try await harness.get(path, headers: [("Accept", "*/*")])
        let refused = try await harness.get(path, headers: [("Accept", "image/webp;q=0, image/jpeg")])
        #expect(browser.header("Content-Type") == "image/webp" && old.header("Content-Type") == "image/jpeg")
        #expect(refused.header("Content-Type") == "image/jpeg" && refused.header("Image-Engine-Cache") == "result-memory")
        #expect([browser, old, refused].allSatisfy { $0.header("Vary") == "Accept" })
        #expect(browser.header("ETag") != old.header("ETag"))
        // Revalidation: the 304 varies as its 200 did.
        let etag = try #require(browser.header("ETag"))
        let revalidated = try await harness.get(path, headers: [("Accept", "image/webp"), ("If-None-Match", etag)])
        #expect(revalidated.status == 304 && revalidated.header("Vary") == "Accept")
        let explicit = try await harness.get(harness.path("rs:fit:100:100/f:png", source), headers: [("Accept", "image/webp")])
        #expect(explicit.header("Content-Type") == "image/png" && explicit.header("Vary") == nil)
        // Off (the default), Accept changes nothing.
        let plain = try await ServiceHarness.start()
        let ignored = try await plain.get(plain.path("rs:fit:100:100", plain.source("kite.jpg")), headers: [("Accept", "image/webp")])
        #expect(ignored.header("Content-Type") == "image/jpeg" && ignored.header("Vary") == nil)
        await plain.stop()
        await harness.stop()
    }

    @Test("f:avif and .avif; with --auto-avif and --auto-webp, AVIF first for a client that takes both, WebP for one that takes only WebP")
    func avif() async throws {
        let harness = try await ServiceHarness.start {
            $0.autoWebP = true
            $0.autoAVIF = true
        }
        let source = harness.source("kite.jpg")
        let explicit = try await harness.get(harness.path("rs:fit:100:100/f:avif", source))
        let ext = try await harness.get(harness.path("rs:fit:100:100", source, ext: "avif"))
        #expect(explicit.header("Content-Type") == "image/avif" && explicit.header("Vary") == nil && ext.body == explicit.body)
        let bitmap = try ImageDecoder().decode(explicit.body)
        #expect(try ImageFormat.sniff(explicit.body) == .avif && (bitmap.width, bitmap.height) == (100, 63))
        let path = harness.path("rs:fit:100:100", source)
        let both = try await harness.get(path, headers: [("Accept", "image/avif,image/webp,*/*")])
        let webpOnly = try await harness.get(path, headers: [("Accept", "image/webp,*/*")])
        let neither = try await harness.get(path, headers: [("Accept", "image/avif;q=0,*/*")])
        #expect(both.header("Content-Type") == "image/avif" && both.header("Image-Engine-Cache") == "result-memory")
        #expect(webpOnly.header("Content-Type") == "image/webp" && neither.header("Content-Type") == "image/jpeg")
        #expect([both, webpOnly, neither].allSatisfy { $0.header("Vary") == "Accept" })
        await harness.stop()
    }

    @Test("a WebP source (lossy, with alpha) renders like its PNG original; a truncated one is a 422")
    func webpSource() async throws {
        let harness = try await ServiceHarness.start()
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        let webp = try WebPFixtures.data("calla-alpha.webp")
        harness.origin.serve("/calla.webp", ImageServer.Resource(data: webp, contentType: "image/webp", lastModified: modified))
        harness.origin.serve(
            "/calla-alpha.png", ImageServer.Resource(data: try WebPFixtures.data("calla-alpha.png"), contentType: "image/png", lastModified: modified)
        )
        harness.origin.serve("/cut.webp", ImageServer.Resource(data: webp.prefix(webp.count / 2), contentType: "image/webp", lastModified: modified))
        let fromWebP = try await harness.get(harness.path("rs:fit:120:120", harness.source("calla.webp")))
        let fromPNG = try await harness.get(harness.path("rs:fit:120:120", harness.source("calla-alpha.png")))
        #expect(fromWebP.status == 200 && fromWebP.header("Content-Type") == "image/png", "a source with alpha gets PNG")
        let (a, b) = (try ImageDecoder().decode(fromWebP.body), try ImageDecoder().decode(fromPNG.body))
        #expect((a.width, a.height) == (b.width, b.height) && a.format == .rgba)
        let mean = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / a.pixels.count
        #expect(mean < 4, "mean difference \(mean)")
        let cut = try await harness.get(harness.path("rs:fit:120:120", harness.source("cut.webp")))
        #expect(cut.status == 422)
        await harness.stop()
    }

    @Test("HEIC and AVIF sources: a rotated HEIC renders upright, an AVIF with alpha renders as PNG with its alpha")
    func heifSources() async throws {
        let harness = try await ServiceHarness.start()
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        for name in ["small-irot-1.heic", "calla-alpha.avif"] {
            let type = name.hasSuffix("avif") ? "image/avif" : "image/heic"
            harness.origin.serve("/\(name)", ImageServer.Resource(data: try HEIFFixtures.data(name), contentType: type, lastModified: modified))
        }
        let heic = try await harness.get(harness.path("rs:fit:30:30", harness.source("small-irot-1.heic")))
        let avif = try await harness.get(harness.path("rs:fit:120:120", harness.source("calla-alpha.avif")))
        #expect(heic.status == 200 && heic.header("Content-Type") == "image/jpeg" && avif.header("Content-Type") == "image/png")
        let (upright, alpha) = (try ImageDecoder().decode(heic.body), try ImageDecoder().decode(avif.body))
        #expect((upright.width, upright.height) == (19, 30) && alpha.format == .rgba && (alpha.width, alpha.height) == (120, 78))
        #expect(stride(from: 3, to: alpha.pixels.count, by: 4).contains { alpha.pixels[$0] < 16 }, "the corners are transparent")
        await harness.stop()
    }
}
