import NIOCore
import NIOEmbedded
import Testing

@testable import ImageService

/// Which connection a full listener closes, on embedded channels with explicit times: the one
/// that has waited longest, never one with a request in progress, never one arriving, and
/// only as many as make one slot free.
@Suite("Connection shedding")
struct ConnectionShedderTests {
    /// A connected channel, so that a close shows as `isActive` turning false.
    private func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private func at(_ seconds: Int64) -> NIODeadline { .uptimeNanoseconds(UInt64(seconds) * 1_000_000_000) }

    @Test("the last slot taken closes the connection that has waited longest, not the one arriving")
    func oldestFirst() throws {
        let shedder = ConnectionShedder(maximum: 3)
        let (a, b, c) = (try connection(), try connection(), try connection())
        shedder.opened(b, at: at(2))
        shedder.opened(a, at: at(1))
        #expect(a.isActive && b.isActive)
        shedder.opened(c, at: at(3))
        #expect(!a.isActive && b.isActive && c.isActive)
        // a still counts until it is gone: the next arrival closes one more, not two.
        let d = try connection()
        shedder.opened(d, at: at(4))
        #expect(!b.isActive && c.isActive && d.isActive && shedder.count == 2)
        shedder.closed(a)
        shedder.closed(b)
        #expect(shedder.count == 2)
        // A free slot: nothing more to close.
        #expect(c.isActive && d.isActive)
    }

    @Test("a connection with a request in progress is never closed; it may be once its answer is written")
    func workingIsSafe() throws {
        let shedder = ConnectionShedder(maximum: 2)
        let (a, b) = (try connection(), try connection())
        shedder.opened(a, at: at(1))
        shedder.working(a)
        shedder.opened(b, at: at(2))
        // Full, but a works and b is arriving: nothing to close yet.
        #expect(a.isActive && b.isActive)
        // a's answer is written: the listener is still full, and b has waited longer.
        shedder.waiting(a, since: at(3))
        #expect(a.isActive && !b.isActive)
    }

    @Test("below the cap nothing is closed")
    func belowTheCap() throws {
        let shedder = ConnectionShedder(maximum: 4)
        let channels = try (0..<3).map { _ in try connection() }
        for (index, channel) in channels.enumerated() { shedder.opened(channel, at: at(Int64(index))) }
        #expect(channels.allSatisfy(\.isActive) && shedder.count == 3)
    }
}
