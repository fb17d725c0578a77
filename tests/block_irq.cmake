# Block and irq probe groups, on the real kernel and disk.
syspgo_test(block_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/block_test.cc)
syspgo_test(irq_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/irq_test.cc)
