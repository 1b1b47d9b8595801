// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20, TransferHelper} from "./ERC20.sol";

/// @title IWETH
/// @notice The WETH9 functions the other contracts use.
interface IWETH {
    function deposit() external payable;
    function withdraw(uint256 amount) external;
}

/// @title WETH9
/// @notice Wrapped Ether: 1 WETH is always redeemable for 1 ETH.
contract WETH9 is ERC20 {
    event Deposit(address indexed account, uint256 amount);
    event Withdrawal(address indexed account, uint256 amount);

    constructor() ERC20("Wrapped Ether", "WETH", 18) {}

    /// @notice Plain ETH transfers are wrapped for the sender.
    receive() external payable {
        deposit();
    }

    /// @notice Wraps msg.value ETH into WETH for the caller.
    function deposit() public payable {
        _mint(msg.sender, msg.value);
        emit Deposit(msg.sender, msg.value);
    }

    /// @notice Burns `amount` WETH of the caller and sends back as much ETH.
    function withdraw(uint256 amount) external {
        _burn(msg.sender, amount);
        emit Withdrawal(msg.sender, amount);
        TransferHelper.safeTransferETH(msg.sender, amount);
    }
}
