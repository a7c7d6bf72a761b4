import Foundation
import ImageCodec
import Testing
import TestSupport

/// The ledger every large buffer of a request is charged to: prepaid work draws on its
/// prepayment, the rest comes from the budget or is refused, and every charge goes back when
/// its buffer goes, wherever it is by then.
@Suite("Memory ledger")
struct MemoryLedgerTests {
    @Test("charges draw on the prepayment first, then the budget; settling returns only what was not drawn")
    func prepaymentThenBudget() throws {
        let budget = MemoryBudget(capacity: 1000)
        let ledger = MemoryLedger(budget: budget)
        #expect(ledger.prepay(300))
        #expect(budget.bytesInUse == 300)
        var first: MemoryCharge? = try ledger.charge(200)
        #expect(budget.bytesInUse == 300 && ledger.bytesPrepaid == 100, "drawn, not taken twice")
        var second: MemoryCharge? = try ledger.charge(250)
        #expect(budget.bytesInUse == 450 && ledger.bytesPrepaid == 0, "100 drawn, 150 from the budget")
        #expect(ledger.bytesCharged == 450 && first?.bytes == 200 && second?.bytes == 250)
        // A buffer freed while the prepayment is open gives its drawn bytes back to it.
        first = nil
        #expect(budget.bytesInUse == 450 && ledger.bytesPrepaid == 200)
        ledger.settle()
        #expect(budget.bytesInUse == 250, "the undrawn 200 went back; the live charge stays")
        second = nil
        #expect(budget.bytesInUse == 0 && ledger.bytesCharged == 0 && ledger.peakBytesCharged == 450)
    }

    @Test("a charge the budget cannot hold is refused with the typed error, and nothing is taken")
    func refusal() throws {
        let budget = MemoryBudget(capacity: 100)
        let ledger = MemoryLedger(budget: budget)
        let held = try ledger.charge(80)
        #expect(throws: ImageCodecError.memoryBudgetExceeded(bytes: 30, capacity: 100)) { _ = try ledger.charge(30) }
        #expect(budget.bytesInUse == 80 && ledger.bytesCharged == 80)
        // Growth is refused the same way, and the charge stays as it was.
        #expect(throws: ImageCodecError.memoryBudgetExceeded(bytes: 25, capacity: 100)) { try held.resize(to: 105) }
        #expect(held.bytes == 80)
        try held.resize(to: 20)
        #expect(budget.bytesInUse == 20)
        #expect(!ledger.prepay(90) && budget.bytesInUse == 20)
    }

    @Test("a charge drawn from a settled prepayment goes back to the budget, not to a later prepayment")
    func laterPrepayment() throws {
        let budget = MemoryBudget(capacity: 1000)
        let ledger = MemoryLedger(budget: budget)
        #expect(ledger.prepay(100))
        var body: MemoryCharge? = try ledger.charge(60)
        ledger.settle()
        #expect(ledger.prepay(50) && budget.bytesInUse == 110 && body?.bytes == 60)
        body = nil
        #expect(budget.bytesInUse == 50 && ledger.bytesPrepaid == 50)
        ledger.settle()
        #expect(budget.bytesInUse == 0)
    }

    @Test("the codec's buffers charge the task's ledger: a decode and an encode within their plans, nothing left when they go")
    func codecUnderLedger() async throws {
        let data = try SmallPhotos.data("kite.jpg")
        let budget = MemoryBudget(capacity: 256 << 20)
        let ledger = MemoryLedger(budget: budget)
        let options = DecodingOptions(resize: .fit(width: 300, height: 300))
        let source = try ImageSource(data: data)
        let plan = try source.plan(options)
        #expect(ledger.prepay(plan.memoryBytes))
        var (bitmap, encoded): (Bitmap?, Data?) = try ledger.charging { () throws(ImageCodecError) in
            let bitmap = try source.decode(options).bitmap
            return (bitmap, try ImageEncoder.jpeg(bitmap))
        }
        let pixels = bitmap?.byteCount ?? 0
        #expect(ledger.peakBytesCharged > pixels, "the rows and the resampler were charged too")
        #expect(ledger.peakBytesCharged <= plan.memoryBytes + ImageEncoder.plannedBytes(width: 300, height: 300, channels: 3, format: .jpeg))
        #expect(ledger.bytesCharged == pixels + (encoded?.count ?? 0), "what lives on is the bitmap and the output, nothing else")
        ledger.settle()
        #expect(budget.bytesInUse == ledger.bytesCharged)
        bitmap = nil
        encoded = nil
        #expect(budget.bytesInUse == 0 && ledger.bytesCharged == 0)
    }

    @Test("a decode whose buffers do not fit the budget fails with the typed error instead of passing it")
    func decodeOverBudget() async throws {
        let data = try SmallPhotos.data("kite.jpg")
        let budget = MemoryBudget(capacity: 64 << 10)
        let ledger = MemoryLedger(budget: budget)
        let result = ledger.charging { () -> Result<Bitmap, ImageCodecError> in
            Result { () throws(ImageCodecError) in try ImageDecoder().decode(data) }
        }
        guard case .failure(.memoryBudgetExceeded(_, let capacity)) = result else {
            Issue.record("expected memoryBudgetExceeded, got \(result)")
            return
        }
        #expect(capacity == 64 << 10 && budget.bytesInUse == 0, "a failed decode leaves nothing charged")
        // Outside a ledger the same decode is not counted (a client app).
        #expect(try ImageDecoder().decode(data).width > 0)
    }
}

/// Whole pages for the largest buffers: grown without losing a byte, freed whole.
@Suite("Page memory")
struct PageMemoryTests {
    @Test("pages keep their bytes as they grow and shrink, across page boundaries and the heap's line")
    func resizeKeepsBytes() throws {
        var generator = SeededGenerator(seed: 0x9A6E)
        // 4 MiB is where the heap hands over to whole pages: growth and shrinking cross it.
        let bytes = (0..<5_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var pages = try #require(PageMemory.allocate(1000))
        pages.copyMemory(from: bytes, byteCount: 1000)
        var size = 1000
        for next in [5000, 70_000, 300_000, 4_194_304, 4_200_000, 5_000_000] {
            pages = try #require(PageMemory.resize(pages, from: size, to: next))
            (pages + size).copyMemory(from: Array(bytes[size..<next]), byteCount: next - size)
            size = next
        }
        #expect(Array(UnsafeRawBufferPointer(start: pages, count: size)) == bytes, "\(generator.replay)")
        pages = try #require(PageMemory.resize(pages, from: size, to: 4097))
        #expect(Array(UnsafeRawBufferPointer(start: pages, count: 4097)) == Array(bytes.prefix(4097)))
        PageMemory.free(pages, 4097)
    }
}
