import Foundation
import Testing
import TestSupport
@testable import ImageCodec

@Suite("Thumbnailer")
struct ThumbnailerTests {
    /// Small JPEGs and PNGs of different sizes, and a broken file among them.
    static func inputs(in directory: TemporaryDirectory) throws -> [URL] {
        var urls: [URL] = []
        for (index, side) in [300, 90, 500, 120, 260, 40].enumerated() {
            let bitmap = TestImages.make(width: side, height: side * 2 / 3, format: .rgb) { x, y in
                [UInt8(truncatingIfNeeded: x * 3 + index), UInt8(truncatingIfNeeded: y * 5), UInt8(truncatingIfNeeded: x ^ y)]
            }
            let url = directory.file("photo\(index).\(index.isMultiple(of: 2) ? "jpg" : "png")")
            try (index.isMultiple(of: 2) ? ImageEncoder.jpeg(bitmap) : ImageEncoder.png(bitmap)).write(to: url)
            urls.append(url)
        }
        let broken = directory.file("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xDB, 0x00]).write(to: broken)
        urls.insert(broken, at: 3)
        return urls
    }

    @Test("a batch gives, in input order, the same files and results as one thumbnail at a time, for any jobs",
          arguments: [1, 2, 5])
    func batchMatchesOneByOne(jobs: Int) async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.inputs(in: directory)
        let thumbnailer = Thumbnailer(options: ThumbnailOptions(maxPixelSize: 100))
        let batch = directory.file("batch"), single = directory.file("single")
        try FileBytes.createDirectory(batch)
        try FileBytes.createDirectory(single)
        let progress = ProgressRecorder()
        let results = await thumbnailer.run(inputs, outputDirectory: batch, jobs: jobs) { finished, total in
            progress.record(finished, total)
        }
        #expect(results.count == inputs.count)
        for (input, result) in zip(inputs, results) {
            let output = thumbnailer.outputURL(for: input, in: single)
            switch (result, Result { () throws(ImageCodecError) in try thumbnailer.makeThumbnail(from: input, to: output) }) {
            case (.success(let made), .success(let expected)):
                #expect(made.input == input.path && made.width == expected.width && made.height == expected.height)
                #expect(try Data(contentsOf: URL(fileURLWithPath: made.output)) == Data(contentsOf: output), "\(input.lastPathComponent)")
            case (.failure(let error), .failure(let expected)):
                #expect(error == expected && input.lastPathComponent == "broken.jpg")
            default:
                Issue.record("\(input.lastPathComponent): batch \(result), one at a time differs")
            }
        }
        #expect(progress.values == (1...inputs.count).map { ($0, inputs.count) }.map { "\($0.0)/\($0.1)" })
    }
}

/// Progress callbacks, recorded from whatever thread calls them.
final class ProgressRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    func record(_ finished: Int, _ total: Int) { lock.withLock { recorded.append("\(finished)/\(total)") } }
    var values: [String] { lock.withLock { recorded } }
}
