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

    @Test(
        "a batch gives, in input order, the same files and results as one thumbnail at a time, for any jobs and budget",
        arguments: [(1, nil), (2, nil), (5, nil), (2, 1), (3, 200_000)] as [(Int, Int?)])
    func batchMatchesOneByOne(jobs: Int, memoryBudget: Int?) async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.inputs(in: directory)
        let thumbnailer = Thumbnailer(options: ThumbnailOptions(resize: .fill(width: 100, height: 80), memoryBudget: memoryBudget))
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

    @Test("a missing output directory is made, with its parents; one that cannot be is every result's error")
    func outputDirectory() async throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.inputs(in: directory).filter { $0.lastPathComponent != "broken.jpg" }
        let thumbnailer = Thumbnailer(options: ThumbnailOptions(resize: .fit(width: 50, height: 50)))
        let nested = directory.file("thumbs/of/today")
        let results = await thumbnailer.run(inputs, outputDirectory: nested, jobs: 2)
        for result in results {
            let made = try result.get()
            #expect(URL(fileURLWithPath: made.output).deletingLastPathComponent().path == nested.path && made.width <= 50)
        }
        // A file where a directory must go: no decode starts, every input gets the same error.
        let blocked = directory.file("blocked")
        try Data("a file".utf8).write(to: blocked)
        let refused = await thumbnailer.run(inputs, outputDirectory: blocked.appendingPathComponent("sub"), jobs: 2)
        #expect(refused.count == inputs.count)
        #expect(refused.allSatisfy { if case .failure(.io(let path, _)) = $0 { path.hasSuffix("blocked/sub") } else { false } })
    }
}

/// The batch order by planned memory.
@Suite("Thumbnailer: memory schedule")
struct BatchScheduleTests {
    @Test("without a budget a batch takes the pipeline's rule for the whole batch: an eighth of RAM, 128 MiB-1 GiB")
    func defaultBudget() {
        let rule = min(1 << 30, max(128 << 20, Int(ProcessInfo.processInfo.physicalMemory / 8)))
        #expect(MemoryBudget.defaultDecodeBudget == rule)
        #expect(Thumbnailer(options: ThumbnailOptions()).memoryBudget == rule)
        #expect(Thumbnailer(options: ThumbnailOptions(memoryBudget: 5 << 20)).memoryBudget == 5 << 20)
    }

    @Test("with room for two large decodes, a large one still pairs with small ones while any are left, then with a large one")
    func largePairsWithSmallFirst() {
        let mib = 1 << 20
        var schedule = BatchSchedule(
            [("heic", 200 * mib), ("jpeg-24MP", 72 * mib), ("small-1", 8 * mib), ("small-2", 4 * mib)].map { (item: $0.0, cost: $0.1) },
            budget: 1 << 30)
        #expect(schedule.next()?.item == "heic")
        #expect(schedule.next()?.item == "small-1", "not the 72 MiB one, though it fits")
        #expect(schedule.next()?.item == "small-2")
        schedule.finished(cost: 8 * mib)
        schedule.finished(cost: 4 * mib)
        #expect(schedule.next()?.item == "jpeg-24MP", "no small one left: two large ones run side by side")
    }

    @Test("big decodes pair with small ones; the running total stays within the budget, but one alone may exceed it")
    func pairing() {
        var schedule = BatchSchedule(
            [("a", 90), ("b", 60), ("c", 50), ("d", 10), ("e", 10), ("f", 5), ("g", 120)].map { (item: $0.0, cost: $0.1) },
            budget: 100)
        // Nothing runs: the largest starts, even over the budget.
        #expect(schedule.next()?.item == "g")
        #expect(schedule.next() == nil, "nothing may join a decode over the budget")
        schedule.finished(cost: 120)
        #expect(schedule.next()?.item == "a")
        #expect(schedule.next()?.item == "d", "the largest that fits beside 90")
        #expect(schedule.next() == nil)
        schedule.finished(cost: 90)
        #expect(schedule.next()?.item == "b")
        #expect(schedule.next()?.item == "e")
        #expect(schedule.next()?.item == "f")
        #expect(schedule.next() == nil, "c (50) does not fit beside 85")
        for cost in [10, 60, 10, 5] { schedule.finished(cost: cost) }
        #expect(schedule.next()?.item == "c" && schedule.isEmpty)
    }

    @Test("random costs and finishing orders: every item runs once, and the budget holds whenever two run")
    func randomised() {
        var generator = SeededGenerator()
        let seed = generator.seed
        for _ in 0..<200 {
            let costs = (0..<Int.random(in: 1...12, using: &generator)).map { _ in Int.random(in: 0...150, using: &generator) }
            var schedule = BatchSchedule(costs.enumerated().map { (item: $0.offset, cost: $0.element) }, budget: 100)
            var running: [(item: Int, cost: Int)] = [], started: [Int] = []
            while !schedule.isEmpty || !running.isEmpty {
                while running.count < 3, let next = schedule.next() {
                    running.append(next)
                    started.append(next.item)
                    let total = running.reduce(0) { $0 + $1.cost }
                    #expect(running.count == 1 || total <= 100, "seed \(seed): \(running)")
                }
                #expect(!running.isEmpty, "seed \(seed): stalled with items left")
                if running.isEmpty { break }
                let done = running.remove(at: Int.random(in: 0..<running.count, using: &generator))
                schedule.finished(cost: done.cost)
            }
            #expect(started.sorted() == Array(costs.indices), "seed \(seed)")
        }
    }
}

/// Progress callbacks, recorded from whatever thread calls them.
final class ProgressRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    func record(_ finished: Int, _ total: Int) { lock.withLock { recorded.append("\(finished)/\(total)") } }
    var values: [String] { lock.withLock { recorded } }
}

/// Plans from the header alone.
@Suite("Decode plans")
struct DecodePlanTests {
    @Test("a plan's size is the decode's, from the header alone (a prefix is enough), for every mode and orientation")
    func sizesMatchDecodes() throws {
        let source = TestImages.texture(width: 300, height: 200)
        let resizes: [Resize?] = [
            nil, .fit(width: 100, height: 100), .fill(width: 90, height: 120, gravity: .north),
            .fillDown(width: 400, height: 100), .force(width: 33, height: 44), .fit(width: 0, height: 50, enlarge: true)
        ]
        for data in [TestImages.withOrientation(try TestImages.faithfulJPEG(source), 6), try ImageEncoder.png(source)] {
            for resize in resizes {
                let decoder = ImageDecoder(options: DecodingOptions(resize: resize))
                let plan = try decoder.plan(data)
                let bitmap = try decoder.decode(data)
                #expect(plan.width == bitmap.width && plan.height == bitmap.height, "\(String(describing: resize))")
                #expect(try decoder.plan(data.prefix(1000)) == plan, "a prefix holding the header plans the same")
            }
        }
        let jpeg = try TestImages.faithfulJPEG(source)
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder().plan(jpeg.prefix(100)) }
    }

    @Test("a progressive JPEG plans its whole coefficient buffer; a baseline one only rows")
    func progressiveCostsItsCoefficients() throws {
        let source = TestImages.texture(width: 1024, height: 768)
        let options = JPEGEncodingOptions(quality: 90, chromaSubsampling: .s420)
        var progressive = options
        progressive.progressive = true
        let decoding = DecodingOptions(maxPixelSize: 256)
        let baseline = try ImageSource(data: ImageEncoder.jpeg(source, options: options))
        let progressiveSource = try ImageSource(data: ImageEncoder.jpeg(source, options: progressive))
        let (baselinePlan, progressivePlan) = (try baseline.plan(decoding), try progressiveSource.plan(decoding))
        // 4:2:0: 1.5 samples a pixel, 2 bytes a coefficient; the header reads hold a few tables.
        let coefficients = 1024 * 768 * 3 / 2 * 2
        #expect(progressivePlan.memoryBytes - baselinePlan.memoryBytes == coefficients + progressiveSource.headerBytes - baseline.headerBytes)
        #expect(baselinePlan.memoryBytes < coefficients / 4, "\(baselinePlan.memoryBytes)")
        #expect(progressivePlan.scaleNumerator == 4 && baselinePlan.scaleNumerator == 4)
    }
}
