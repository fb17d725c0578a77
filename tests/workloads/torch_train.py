"""A CPU-bound training loop on Debian's PyTorch (python3-torch): a small MLP
trained with SGD on synthetic data that a DataLoader makes in 2 worker
processes. Usage: torch_train.py [STEPS]"""
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Synthetic(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(256, generator=g), int(i % 10)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = DataLoader(Synthetic(steps * 64), batch_size=64, num_workers=2)
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()
