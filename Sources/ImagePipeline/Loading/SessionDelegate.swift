import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Locking

/// Routes URLSession's delegate calls to the transfer they belong to.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = Lock()
    private var transfers: [Int: Transfer] = [:]

    func register(_ transfer: Transfer) {
        lock.withLock { transfers[transfer.task.taskIdentifier] = transfer }
    }

    private func transfer(_ task: URLSessionTask) -> Transfer? {
        lock.withLock { transfers[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let accepted = transfer(dataTask)?.receive(response: response) ?? false
        completionHandler(accepted ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(dataTask)?.receive(data: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = lock.withLock { transfers.removeValue(forKey: task.taskIdentifier) }
        transfer?.complete(error: error)
    }
}
