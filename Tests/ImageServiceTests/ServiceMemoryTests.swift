import Foundation
import ImageCache
import ImageCodec
import ImageServer
@testable import ImageService
import Testing
import TestSupport

/// The threat model's "memory a request holds" rows: every large buffer — a source, a cached
/// file read, an answer until its last byte is written — is charged to `--max-memory` from
/// before it is allocated for as long as it lives, so slow or absent readers, disk hits and
/// `skp:` answers fill the budget (and `/ready` says so) instead of the process.
@Suite("Service: the memory ledger", .timeLimit(.minutes(2)))
struct ServiceMemoryTests {
    /// A JPEG of about 18 MB (noise at quality 100): larger than any socket buffer. The noise is
    /// 64 rows of it repeated (each block costs the same in the file), which a debug build makes
    /// in milliseconds.
    static let largeJPEG: Data = {
        var generator = SeededGenerator(seed: 0x1ED6_E7)
        let side = 3600
        let tile = (0..<64 * side * 3).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var pixels = [UInt8](repeating: 0, count: side * side * 3)
        pixels.withUnsafeMutableBytes { output in
            tile.withUnsafeBytes { tile in
                for row in 0..<side {
                    let rowBytes = side * 3
                    (output.baseAddress! + row * rowBytes).copyMemory(from: tile.baseAddress! + (row % 64) * rowBytes, byteCount: rowBytes)
                }
            }
        }
        let bitmap = try! Bitmap(width: side, height: side, format: .rgb, pixels: pixels)
        return try! ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 100, encoder: .libjpegTurbo))
    }()

    /// A service whose memory caches keep nothing, so what the budget holds is what requests
    /// and answers hold; `large` sources served at /large-N.jpg, on hosts of their own
    /// (``large(_:)``: one host's bodies may hold only a share of the budget).
    private func start(budget: Int, diskCache: Bool = false) async throws -> ServiceHarness {
        let harness = try await ServiceHarness.start(
            diskCache: diskCache, resolver: TestResolver(),
            configure: {
                $0.memoryBudget = budget
                $0.sourceMemoryLimit = 0
                $0.resultMemoryLimit = 0
                $0.maxSourceBytes = 32 << 20
            },
            // The write deadline's own tests are elsewhere: here unread answers wait.
            server: { $0.responseWriteTimeout = .seconds(600) })
        for index in 0..<4 {
            harness.origin.serve("/large-\(index).jpg", ImageServer.Resource(data: Self.largeJPEG, contentType: "image/jpeg"))
        }
        return harness
    }

    /// Large source `index` on a host of its own.
    private func large(_ index: Int, _ harness: ServiceHarness) -> String {
        "http://origin-\(index).test:\(harness.origin.port)/large-\(index).jpg"
    }

    @Test("an answer a client does not read stays charged until the connection closes, and /ready says so when it fills the budget")
    func unreadAnswersHoldTheBudget() async throws {
        let size = Self.largeJPEG.count
        #expect(size > 16 << 20, "the premise: \(size) bytes outlast any socket buffer")
        // Room for three and a quarter: with three held, less than the eighth /ready wants is free.
        let harness = try await start(budget: 3 * size + size / 4)
        // skp: answers the source's own bytes: the whole answer is the (charged) source.
        var readers: [RawConnection] = []
        for index in 0..<3 {
            let path = harness.path("skp:jpg", large(index, harness))
            readers.append(try RawConnection(port: harness.port, request: "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n", receiveBuffer: 4096))
            #expect(await pollUntil { harness.service.memory.bytesInUse >= (index + 1) * size }, "answer \(index) not charged")
        }
        #expect(harness.service.memory.bytesInUse >= 3 * size && harness.service.memory.bytesInUse < 4 * size)
        let ready = try await harness.get("/ready")
        #expect(ready.status == 503 && ready.text.contains("memory"), "\(ready.status) \(ready.text)")
        // A fourth answer of that size has no room: 429, and the process holds no more.
        let refused = try await harness.get(harness.path("skp:jpg", large(3, harness)))
        #expect(refused.status == 429, "\(refused.status) \(refused.text)")
        for reader in readers { reader.close() }
        #expect(await pollUntil { harness.service.memory.bytesInUse == 0 }, "\(harness.service.memory.bytesInUse) bytes left charged")
        #expect(try await harness.get("/ready").status == 200)
        await harness.stop()
    }

    @Test("a reader that takes its answer gets every byte, and the charge goes when the last one is written")
    func answerWrittenWhole() async throws {
        let harness = try await start(budget: 64 << 20)
        let reply = try await harness.get(harness.path("skp:jpg", large(0, harness)))
        #expect(reply.status == 200 && reply.body == Self.largeJPEG)
        #expect(await pollUntil { harness.service.memory.bytesInUse == 0 })
        await harness.stop()
    }

    @Test("a result read from disk is charged before the read: with no room it is 429 and the file is not read")
    func resultDiskHitChargedBeforeRead() async throws {
        let harness = try await start(budget: 64 << 20, diskCache: true)
        let path = harness.path("rs:fit:300:300/f:png", "http://kite.test:\(harness.origin.port)/kite.jpg")
        let first = try await harness.get(path)
        #expect(first.status == 200)
        await harness.service.flush()
        #expect(await pollUntil { harness.service.memory.bytesInUse == 0 })
        let filler = harness.service.memory.capacity - first.body.count / 2
        #expect(harness.service.memory.reserve(filler))
        let before = harness.service.results.counts
        let refused = try await harness.get(path)
        #expect(refused.status == 429 && refused.text.contains("no memory left"), "\(refused.status) \(refused.text)")
        harness.service.memory.release(filler)
        let hit = try await harness.get(path)
        #expect(hit.status == 200 && hit.header("Image-Engine-Cache") == "result-disk" && hit.body == first.body)
        #expect(harness.service.results.counts == before && harness.origin.statistics.requests == 1)
        #expect(await pollUntil { harness.service.memory.bytesInUse == 0 })
        await harness.stop()
    }

    @Test("skp: answers the source's bytes without a copy: the answer shares them")
    func skipProcessingSharesTheSource() async throws {
        let harness = try await start(budget: 64 << 20)
        let response = await harness.service.respond(to: ServiceRequest(path: harness.path("skp:jpg", large(1, harness))))
        #expect(response.status == 200 && response.body.count == Self.largeJPEG.count)
        // The answer and the source are one buffer: the budget holds it once.
        let held = harness.service.memory.bytesInUse
        #expect(held >= Self.largeJPEG.count && held < Self.largeJPEG.count + (1 << 20), "\(held) bytes held for one source")
        await harness.stop()
    }
}
