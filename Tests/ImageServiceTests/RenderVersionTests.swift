import Crypto
import Foundation
import ImageCodec
import ImageServer
@testable import ImageService
import Testing
import TestSupport

/// The render version and the pixels it stands for: when the same request would produce other
/// bytes (a new resampler, DCT-scale rule, IDCT or encoder setting), `EntityTag.renderVersion`
/// must change, or caches that revalidate keep the old thumbnails for ever.
@Suite("Service: render version and ETags")
struct RenderVersionTests {
    /// SHA-256 of `serve`'s answers to `requests` at each render version. After a deliberate
    /// change to the output: bump `EntityTag.renderVersion` and add its hashes here.
    static let golden: [String: [String: String]] = [
        "2": [
            "rs:fill:100:100/q:80 kite.jpg": "cda05ed61366b3dafd19ed0e3a3f69c1116c0da070ea6c79fd67b8dbd3f87e13",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "750f7769eaea498aa503a9278a2a38061dbe933b6c93409a8045ac1f5974ecbf",
            "rs:fill:48:80/g:no ladybird.jpg": "80aba8baf64e4c21dc9bee1a829eaf153e46a7ca7f8e8d1fc4722feb2a06111f"
        ],
        // WebP at method 6, AVIF at speed 6; JPEG and PNG as in 2.
        "3": [
            "rs:fill:100:100/q:80 kite.jpg": "cda05ed61366b3dafd19ed0e3a3f69c1116c0da070ea6c79fd67b8dbd3f87e13",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "750f7769eaea498aa503a9278a2a38061dbe933b6c93409a8045ac1f5974ecbf",
            "rs:fill:48:80/g:no ladybird.jpg": "80aba8baf64e4c21dc9bee1a829eaf153e46a7ca7f8e8d1fc4722feb2a06111f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "f8a21763f063c5c4fcc238c78117a9dfa5a29900899956abfb47c3d1b84688cf"
        ],
        // JPEG from the perceptual encoder; PNG, WebP and AVIF as in 3.
        "4": [
            "rs:fill:100:100/q:80 kite.jpg": "46a93e92eb0f4230fca5ca0442f2112e6484733fe6db69540666d17e35781e78",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "e10f6139a4fe6f5824276854da1830bdc7220ec32ff2f434433903e96d1bb30f",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "f8a21763f063c5c4fcc238c78117a9dfa5a29900899956abfb47c3d1b84688cf"
        ],
        // The perceptual encoder with the fast DCT; PNG, WebP and AVIF as in 3.
        "5": [
            "rs:fill:100:100/q:80 kite.jpg": "46a93e92eb0f4230fca5ca0442f2112e6484733fe6db69540666d17e35781e78",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "af5bbb8f9c8950eabe56fc65ac6c337154303b134d9037085e5b28426abe93f2",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "f8a21763f063c5c4fcc238c78117a9dfa5a29900899956abfb47c3d1b84688cf"
        ],
        // EXIF Artist and Copyright kept by default (kcr:1): these sources name no one (Kite's
        // tags are spaces), so their bytes are 5's.
        "6": [
            "rs:fill:100:100/q:80 kite.jpg": "46a93e92eb0f4230fca5ca0442f2112e6484733fe6db69540666d17e35781e78",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "af5bbb8f9c8950eabe56fc65ac6c337154303b134d9037085e5b28426abe93f2",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "f8a21763f063c5c4fcc238c78117a9dfa5a29900899956abfb47c3d1b84688cf"
        ],
        // AVIF through libavif (dav1d in, libaom on one thread out); the rest as in 6.
        "7": [
            "rs:fill:100:100/q:80 kite.jpg": "46a93e92eb0f4230fca5ca0442f2112e6484733fe6db69540666d17e35781e78",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "af5bbb8f9c8950eabe56fc65ac6c337154303b134d9037085e5b28426abe93f2",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "a10ab08221b530cc02a61a2151c21c632cf6d3792294732f0490a084f36d4bce"
        ],
        // mb: as a search of a few encodes (and AVIF's speed by size, the same at these sizes);
        // the rest as in 7.
        "8": [
            "rs:fill:100:100/q:80 kite.jpg": "46a93e92eb0f4230fca5ca0442f2112e6484733fe6db69540666d17e35781e78",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "af5bbb8f9c8950eabe56fc65ac6c337154303b134d9037085e5b28426abe93f2",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "a10ab08221b530cc02a61a2151c21c632cf6d3792294732f0490a084f36d4bce",
            "rs:fit:300:300/mb:9000 kite.jpg": "f34089be862f4632eb4e76392eaf76a665c843b58e217139dd0e6561110d0026"
        ],
        // The encoder's forward DCT of its own (its column pass is the definition split by
        // symmetry): the same coefficients within float rounding, which moves a few at q:95.
        // The rest as in 8; "q:95 grey.jpg" is the request that shows it.
        "9": [
            "rs:fill:100:100/q:80 kite.jpg": "46a93e92eb0f4230fca5ca0442f2112e6484733fe6db69540666d17e35781e78",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "af5bbb8f9c8950eabe56fc65ac6c337154303b134d9037085e5b28426abe93f2",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "70493546b27e0214115754e70e371d6217a6b3a6b34719263c8ba18fcff3435e",
            "rs:fit:80:80/f:avif kite.jpg": "a10ab08221b530cc02a61a2151c21c632cf6d3792294732f0490a084f36d4bce",
            "rs:fit:300:300/mb:9000 kite.jpg": "f34089be862f4632eb4e76392eaf76a665c843b58e217139dd0e6561110d0026",
            "q:95 grey.jpg": "7a546d54c2cbc2b2cfda5672720cf9b86f91cfba08ed64fc74bab7eccf6633ea"
        ],
        // The engine's float IDCT at every reduced DCT scale (3/8 to 7/8 were libjpeg-turbo's
        // integer ones; 2/8 and 4/8 the same formula, rounded half to even and with a DC that
        // fell just short of half levels) and the horizontal pass as even plus odd taps: kite
        // and grey change. The rest as in 9.
        "10": [
            "rs:fill:100:100/q:80 kite.jpg": "ead0552354e620f6e4d846ab7030ae3599249ef72d8b044c1599c6581264d90e",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "9f5d516941297a2bf3f0198355360778ef7ea20277cdb3c3b671ceb81abcf51f",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "e9444404e32f0f1728b8a74e34c645a56b82c56b100ae7265893a4e4a3680e15",
            "rs:fit:80:80/f:avif kite.jpg": "c093a7e3724895da7bde8ca86b4e46c9e1d8391d05d4cac23c25850429e5544c",
            "rs:fit:300:300/mb:9000 kite.jpg": "f34089be862f4632eb4e76392eaf76a665c843b58e217139dd0e6561110d0026",
            "q:95 grey.jpg": "7a546d54c2cbc2b2cfda5672720cf9b86f91cfba08ed64fc74bab7eccf6633ea"
        ],
        // 8-bit HEIC converted from libheif's planes by the engine, chroma interpolated: a HEIC
        // source joins the list. The rest as in 10.
        "11": [
            "rs:fill:100:100/q:80 kite.jpg": "ead0552354e620f6e4d846ab7030ae3599249ef72d8b044c1599c6581264d90e",
            "rs:fit:64:64 calla.png": "804e688c9f8312a14083250f932eb1ce0c71bc4fe13c3c5dba69e59e32d91b6a",
            "rs:force:50:30/q:90 grey.jpg": "9f5d516941297a2bf3f0198355360778ef7ea20277cdb3c3b671ceb81abcf51f",
            "rs:fill:48:80/g:no ladybird.jpg": "8dbbb51152bc6af795358a68d085551fc2befe1a2a995beb20af75ed8c01ac4f",
            "rs:fit:80:80/f:webp kite.jpg": "e9444404e32f0f1728b8a74e34c645a56b82c56b100ae7265893a4e4a3680e15",
            "rs:fit:80:80/f:avif kite.jpg": "c093a7e3724895da7bde8ca86b4e46c9e1d8391d05d4cac23c25850429e5544c",
            "rs:fit:300:300/mb:9000 kite.jpg": "f34089be862f4632eb4e76392eaf76a665c843b58e217139dd0e6561110d0026",
            "q:95 grey.jpg": "7a546d54c2cbc2b2cfda5672720cf9b86f91cfba08ed64fc74bab7eccf6633ea",
            "rs:fit:200:200/q:85 kite.heic": "d456cae38ce5ef7e9b8c2cb83d8b8248b2623a13487cbbbcf9067791811fdbe5"
        ]
    ]

    /// SHA-256 of the answers with `--jpeg-encoder libjpeg-turbo` (render version 3's encoder)
    /// at the current render version. Until version 9 they were version 3's bytes; version 10's
    /// decode changed the pixels it encodes.
    static let libjpegTurboGolden: [String: String] = [
        "rs:fill:100:100/q:80 kite.jpg": "fa1d4927b7ec33015efad6386f2062c1f08026e8df51a129e2a35ba6a8abce10",
        "rs:force:50:30/q:90 grey.jpg": "4a69e2704a3847495723cdaf941dd827d5913fc8292e820d2ad37e05b8e5523a",
        "rs:fill:48:80/g:no ladybird.jpg": "3c5fa3e77cea84dcc44b92ad13dc8bd8a33d44eeb18e3b24acc86cd243dae9ec"
    ]

    static let requests = [
        "rs:fill:100:100/q:80 kite.jpg", "rs:fit:64:64 calla.png", "rs:force:50:30/q:90 grey.jpg", "rs:fill:48:80/g:no ladybird.jpg",
        "rs:fit:80:80/f:webp kite.jpg", "rs:fit:80:80/f:avif kite.jpg", "rs:fit:300:300/mb:9000 kite.jpg", "q:95 grey.jpg",
        "rs:fit:200:200/q:85 kite.heic"
    ]

    @Test("the thumbnails are the ones this render version stands for")
    func goldenHashes() async throws {
        let harness = try await ServiceHarness.start()
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        harness.origin.serve(
            "/kite.heic", ImageServer.Resource(data: try HEIFFixtures.data("kite.heic"), contentType: "image/heic", lastModified: modified))
        let expected = try #require(Self.golden[EntityTag.renderVersion], "no hashes for render version \(EntityTag.renderVersion)")
        for request in Self.requests {
            let parts = request.split(separator: " ")
            let reply = try await harness.get(harness.path(String(parts[0]), harness.source(String(parts[1]))))
            #expect(reply.status == 200)
            let hash = SHA256.hash(data: reply.body).map { String(format: "%02x", $0) }.joined()
            #expect(hash == expected[request], "\(request): \(hash); the output changed: bump EntityTag.renderVersion")
        }
        await harness.stop()
    }

    @Test("--jpeg-encoder libjpeg-turbo gives libjpeg-turbo's JPEGs byte for byte, under other keys")
    func libjpegTurboReproducesOldBytes() async throws {
        let harness = try await ServiceHarness.start { $0.jpegEncoder = .libjpegTurbo }
        let current = try await ServiceHarness.start()
        for request in Self.libjpegTurboGolden.keys.sorted() {
            let parts = request.split(separator: " ")
            let reply = try await harness.get(harness.path(String(parts[0]), harness.source(String(parts[1]))))
            #expect(reply.status == 200)
            let hash = SHA256.hash(data: reply.body).map { String(format: "%02x", $0) }.joined()
            #expect(hash == Self.libjpegTurboGolden[request], "\(request): \(hash)")
            let now = try await current.get(current.path(String(parts[0]), current.source(String(parts[1]))))
            #expect(now.header("ETag") != reply.header("ETag") && now.body != reply.body, "\(request)")
        }
        let path = harness.path("w:100", harness.source("kite.jpg"))
        #expect(try ProcessingJob(ServiceRequest(path: path), service: harness.service).resultKey(.jpeg).contains("jpeg-encoder:libjpeg-turbo"))
        #expect(try !ProcessingJob(ServiceRequest(path: path), service: current.service).resultKey(.jpeg).contains("jpeg-encoder"))
        await harness.stop()
        await current.stop()
    }

    @Test("the ETag follows the effective quality and the output-size clamp, not only the URL")
    func etagInputs() async throws {
        func etag(_ configure: @escaping (inout ThumbnailService.Configuration) -> Void, options: String) async throws -> String? {
            let harness = try await ServiceHarness.start(configure: configure)
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            await harness.stop()
            #expect(reply.status == 200)
            return reply.header("ETag")
        }
        let base = try await etag({ _ in }, options: "w:100")
        #expect(base != nil)
        #expect(try await etag({ $0.defaultQuality = 60 }, options: "w:100") != base, "another default quality, other bytes")
        #expect(try await etag({ $0.defaultQuality = 60 }, options: "w:100/q:80") == base, "the URL names the quality: the same bytes")
        // No resize asked: the 480 px source is clamped to the longest output side.
        let unclamped = try await etag({ _ in }, options: "q:80")
        #expect(try await etag({ $0.maxOutputSide = 200 }, options: "q:80") != unclamped)
        // Another shrink-on-load rule, other pixels: another ETag (and result key).
        #expect(try await etag({ $0.fastShrinkOnLoad = true }, options: "w:100") != base)
    }

    @Test("--fast-shrink-on-load: the same size, other pixels, another result key; the default's key and ETag unchanged")
    func fastShrinkOnLoad() async throws {
        let harness = try await ServiceHarness.start()
        let fast = try await ServiceHarness.start { $0.fastShrinkOnLoad = true }
        let path = harness.path("rs:fit:100:100", harness.source("kite.jpg"))
        let (quality, quick) = (try await harness.get(path), try await fast.get(fast.path("rs:fit:100:100", fast.source("kite.jpg"))))
        #expect(quality.status == 200 && quick.status == 200)
        let (sharp, soft) = (try ImageDecoder().decode(quality.body), try ImageDecoder().decode(quick.body))
        #expect(sharp.width == soft.width && sharp.height == soft.height)
        // kite.jpg is 480×300: fitted into 100 the fast rule decodes at 2/8, the default at 3/8.
        #expect(sharp.pixels != soft.pixels)
        let job = try ProcessingJob(ServiceRequest(path: path), service: fast.service)
        #expect(job.resultKey(.jpeg).contains("shrink-on-load:fast"))
        #expect(try !ProcessingJob(ServiceRequest(path: path), service: harness.service).resultKey(.jpeg).contains("shrink-on-load"))
        await harness.stop()
        await fast.stop()
    }
}
