import Foundation
import HTTPTypes
import HummingbirdCore
@testable import ImageService
import Locking
import NIOCore
import Testing
import TestSupport

/// The threat model's "answers being written" row: an answer's writer hands the connection at
/// most a window's worth of bytes it has not written, whatever the event loop is doing, so an
/// answer nobody reads holds its own (charged) bytes and a window, never a copy of itself.
@Suite("Service: the outbound window")
struct OutboundWindowTests {
    /// A connection that takes slices and writes them only when the test says.
    final class Connection: ResponseBodyWriter, @unchecked Sendable {
        private let lock = Lock()
        private var slices: [Int] = []
        private(set) var finished = false

        func write(_ buffer: ByteBuffer) async throws { lock.withLock { slices.append(buffer.readableBytes) } }
        func finish(_ trailingHeaders: HTTPFields?) async throws { lock.withLock { finished = true } }
        var handedOver: Int { lock.withLock { slices.reduce(0, +) } }
        var isFinished: Bool { lock.withLock { finished } }
    }

    @Test("an answer waits at the window while nothing is written, goes on as the socket drains, and ends when the connection goes")
    func writerWaits() async throws {
        let window = OutboundWindow()
        let answer = Data(repeating: 7, count: 4 << 20)
        let connection = Connection()
        let writing = Task { try await ServiceResponder.body(answer, window: window).write(connection) }
        // Nothing is written to the socket: the writer stops once the window is full.
        #expect(await pollUntil { connection.handedOver >= window.limit })
        try await Task.sleep(for: .milliseconds(200))
        #expect(connection.handedOver < window.limit + ServiceResponder.sliceBytes, "\(connection.handedOver) bytes handed over")
        #expect(window.bytesPending == connection.handedOver)
        // The socket drains: the writer goes on, a window at a time, to the end.
        var written = 0
        while !connection.isFinished {
            let pending = connection.handedOver - written
            window.written(pending)
            written += pending
            _ = await pollUntil { connection.handedOver > written || connection.isFinished }
        }
        window.written(connection.handedOver - written)
        #expect(connection.handedOver == answer.count && window.bytesPending == 0)
        try await writing.value
        // A connection that goes while the writer waits: the writer is released at once.
        let closing = OutboundWindow()
        let stuck = Connection()
        let abandoned = Task { try await ServiceResponder.body(answer, window: closing).write(stuck) }
        #expect(await pollUntil { stuck.handedOver >= closing.limit })
        closing.close()
        _ = try await abandoned.value
    }

    @Test("the window tells the shedder when a client stops reading and when it reads again")
    func stalls() {
        let changes = Recorder()
        let window = OutboundWindow(limit: 100) { changes.append($0 ? "stalled" : "reading") }
        window.handedOver(60)
        window.handedOver(60)
        window.written(30)
        window.written(60)
        #expect(changes.names == ["stalled", "reading"] && window.bytesPending == 30)
    }
}
