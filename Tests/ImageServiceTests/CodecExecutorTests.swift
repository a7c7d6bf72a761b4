import Foundation
import ImageCodec
@testable import ImageService
import Testing
import TestSupport

/// Renders decode and encode on `CodecExecutor`: off the cooperative pool, inside their
/// request's task, so a cancelled request's codec work stops between rows.
@Suite("Service: the codec executor")
struct CodecExecutorTests {
    @Test("a decode run on the codec executor in a cancelled task stops with .cancelled; in a live one it decodes")
    func cancellationReachesTheCodec() async throws {
        let data = try SmallPhotos.data("kite.jpg")
        let run = { @Sendable () async -> Result<Int, ImageCodecError> in
            await withTaskExecutorPreference(CodecExecutor.shared) {
                Result { () throws(ImageCodecError) -> Int in try ImageDecoder().decode(data).width }
            }
        }
        let cancelled = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await run()
        }.value
        #expect(throws: ImageCodecError.cancelled) { _ = try cancelled.get() }
        #expect(try await Task { await run() }.value.get() == 480)
    }
}
