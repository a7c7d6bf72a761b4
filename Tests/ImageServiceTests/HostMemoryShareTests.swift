import ImageCodec
@testable import ImageService
import Testing

@Suite("Service: a host's share of the memory budget")
struct HostMemoryShareTests {
    @Test("one host holds at most a quarter of the budget; other hosts still reserve; releases give back both")
    func share() {
        let budget = MemoryBudget(capacity: 1000)
        let share = HostMemoryShare(budget: budget)
        #expect(share.maximumPerHost == 250)
        #expect(share.reserve(200, for: "a.example") && !share.reserve(51, for: "a.example") && share.reserve(50, for: "a.example"))
        #expect(share.bytesHeld(by: "a.example") == 250 && budget.bytesInUse == 250)
        #expect(share.reserve(250, for: "b.example") && share.reserve(250, for: "c.example") && share.reserve(250, for: "d.example"))
        // The budget is full: a host within its share is still refused, and nothing is held.
        #expect(!share.reserve(1, for: "e.example") && share.bytesHeld(by: "e.example") == 0 && budget.bytesInUse == 1000)
        share.release(250, for: "a.example")
        #expect(share.bytesHeld(by: "a.example") == 0 && budget.bytesInUse == 750 && share.reserve(1, for: "e.example"))
    }

    @Test("the share is never less than one largest source, nor more than the budget")
    func floor() {
        let budget = MemoryBudget(capacity: 192)
        #expect(HostMemoryShare(budget: budget, floor: 60).maximumPerHost == 60)
        #expect(HostMemoryShare(budget: budget, floor: 10).maximumPerHost == 48)
        #expect(HostMemoryShare(budget: budget, floor: 500).maximumPerHost == 192)
    }
}
