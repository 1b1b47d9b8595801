// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TransferHelper} from "./ERC20.sol";
import {AmmFactory} from "./AmmFactory.sol";
import {AmmPair} from "./AmmPair.sol";
import {IWETH} from "./WETH9.sol";

/// @title AmmRouter
/// @notice Liquidity and exact-input swaps over AmmPairs, multi-hop along `path`, wrapping and
/// unwrapping ETH through WETH. Quotes come from each pair's own `getAmountOut`, so virtual
/// reserves and fee hooks are priced exactly as the pair checks them.
contract AmmRouter {
    address public immutable factory;
    address public immutable weth;

    modifier ensure(uint256 deadline) {
        require(deadline >= block.timestamp, "AmmRouter: expired");
        _;
    }

    constructor(address factory_, address weth_) {
        factory = factory_;
        weth = weth_;
    }

    /// @notice Only WETH (unwrapping) may send ETH here.
    receive() external payable {
        require(msg.sender == weth, "AmmRouter: ETH only from WETH");
    }

    /// @notice Adds liquidity at the pool's current ratio (creating a plain pair if none exists).
    /// @return amountA Token A deposited.
    /// @return amountB Token B deposited.
    /// @return liquidity LP tokens minted to `to`.
    function addLiquidity(
        address tokenA,
        address tokenB,
        uint256 amountADesired,
        uint256 amountBDesired,
        uint256 amountAMin,
        uint256 amountBMin,
        address to,
        uint256 deadline
    ) external ensure(deadline) returns (uint256 amountA, uint256 amountB, uint256 liquidity) {
        require(amountADesired > 0 && amountBDesired > 0, "AmmRouter: zero amount");
        address pair = AmmFactory(factory).getPair(tokenA, tokenB);
        if (pair == address(0)) pair = AmmFactory(factory).createPair(tokenA, tokenB);
        require(AmmPair(pair).initializer() == address(0), "AmmRouter: launch pools do not accept liquidity");
        (amountA, amountB) = _optimalAmounts(pair, tokenA, amountADesired, amountBDesired, amountAMin, amountBMin);
        TransferHelper.safeTransferFrom(tokenA, msg.sender, pair, amountA);
        TransferHelper.safeTransferFrom(tokenB, msg.sender, pair, amountB);
        liquidity = AmmPair(pair).mint(to);
    }

    /// @notice Burns `liquidity` LP tokens of the caller and sends both tokens to `to`.
    function removeLiquidity(
        address tokenA,
        address tokenB,
        uint256 liquidity,
        uint256 amountAMin,
        uint256 amountBMin,
        address to,
        uint256 deadline
    ) external ensure(deadline) returns (uint256 amountA, uint256 amountB) {
        address pair = _pairFor(tokenA, tokenB);
        TransferHelper.safeTransferFrom(pair, msg.sender, pair, liquidity);
        (uint256 amount0, uint256 amount1) = AmmPair(pair).burn(to);
        (amountA, amountB) = tokenA == AmmPair(pair).token0() ? (amount0, amount1) : (amount1, amount0);
        require(amountA >= amountAMin, "AmmRouter: insufficient A amount");
        require(amountB >= amountBMin, "AmmRouter: insufficient B amount");
    }

    /// @notice Swaps exactly `amountIn` of path[0] for as much of path[last] as possible.
    /// @param amountOutMin Reverts unless at least this much of path[last] arrives.
    /// @param path Token route, e.g. [TSLAx, USDC, WETH]; each hop needs a pair.
    /// @return amounts Amount of every token along the path.
    function swapExactTokensForTokens(
        uint256 amountIn,
        uint256 amountOutMin,
        address[] calldata path,
        address to,
        uint256 deadline
    ) external ensure(deadline) returns (uint256[] memory amounts) {
        amounts = _quoteWithMin(amountIn, amountOutMin, path);
        TransferHelper.safeTransferFrom(path[0], msg.sender, _pairFor(path[0], path[1]), amountIn);
        _swap(amounts, path, to);
    }

    /// @notice Wraps msg.value into WETH and swaps it along `path` (path[0] must be WETH).
    function swapExactETHForTokens(uint256 amountOutMin, address[] calldata path, address to, uint256 deadline)
        external
        payable
        ensure(deadline)
        returns (uint256[] memory amounts)
    {
        require(path.length >= 2 && path[0] == weth, "AmmRouter: path must start with WETH");
        amounts = _quoteWithMin(msg.value, amountOutMin, path);
        IWETH(weth).deposit{value: msg.value}();
        TransferHelper.safeTransfer(weth, _pairFor(path[0], path[1]), msg.value);
        _swap(amounts, path, to);
    }

    /// @notice Swaps exactly `amountIn` of path[0] into WETH (path[last]) and sends it to `to` as ETH.
    function swapExactTokensForETH(
        uint256 amountIn,
        uint256 amountOutMin,
        address[] calldata path,
        address to,
        uint256 deadline
    ) external ensure(deadline) returns (uint256[] memory amounts) {
        require(path.length >= 2 && path[path.length - 1] == weth, "AmmRouter: path must end with WETH");
        amounts = _quoteWithMin(amountIn, amountOutMin, path);
        TransferHelper.safeTransferFrom(path[0], msg.sender, _pairFor(path[0], path[1]), amountIn);
        _swap(amounts, path, address(this));
        uint256 amountOut = amounts[amounts.length - 1];
        IWETH(weth).withdraw(amountOut);
        TransferHelper.safeTransferETH(to, amountOut);
    }

    /// @notice Quotes an exact-input swap along `path`, hop by hop (fees included).
    /// @return amounts amounts[0] = amountIn, amounts[i] = output of hop i.
    function getAmountsOut(uint256 amountIn, address[] memory path) public view returns (uint256[] memory amounts) {
        require(path.length >= 2, "AmmRouter: invalid path");
        require(amountIn > 0, "AmmRouter: zero amount");
        amounts = new uint256[](path.length);
        amounts[0] = amountIn;
        for (uint256 i = 0; i < path.length - 1; i++) {
            amounts[i + 1] = AmmPair(_pairFor(path[i], path[i + 1])).getAmountOut(amounts[i], path[i]);
        }
    }

    function _quoteWithMin(uint256 amountIn, uint256 amountOutMin, address[] calldata path)
        private
        view
        returns (uint256[] memory amounts)
    {
        amounts = getAmountsOut(amountIn, path);
        require(amounts[amounts.length - 1] >= amountOutMin, "AmmRouter: insufficient output amount");
    }

    function _swap(uint256[] memory amounts, address[] calldata path, address recipient) private {
        for (uint256 i = 0; i < path.length - 1; i++) {
            (address input, address output) = (path[i], path[i + 1]);
            uint256 amountOut = amounts[i + 1];
            (uint256 amount0Out, uint256 amount1Out) = input < output ? (uint256(0), amountOut) : (amountOut, uint256(0));
            address to = i < path.length - 2 ? _pairFor(output, path[i + 2]) : recipient;
            AmmPair(_pairFor(input, output)).swap(amount0Out, amount1Out, to);
        }
    }

    function _optimalAmounts(
        address pair,
        address tokenA,
        uint256 amountADesired,
        uint256 amountBDesired,
        uint256 amountAMin,
        uint256 amountBMin
    ) private view returns (uint256 amountA, uint256 amountB) {
        (uint256 r0, uint256 r1) = AmmPair(pair).getReserves();
        (uint256 reserveA, uint256 reserveB) = tokenA == AmmPair(pair).token0() ? (r0, r1) : (r1, r0);
        if (reserveA == 0 && reserveB == 0) return (amountADesired, amountBDesired);
        uint256 amountBOptimal = (amountADesired * reserveB) / reserveA;
        if (amountBOptimal <= amountBDesired) {
            require(amountBOptimal >= amountBMin, "AmmRouter: insufficient B amount");
            return (amountADesired, amountBOptimal);
        }
        uint256 amountAOptimal = (amountBDesired * reserveA) / reserveB;
        require(amountAOptimal >= amountAMin, "AmmRouter: insufficient A amount");
        return (amountAOptimal, amountBDesired);
    }

    function _pairFor(address tokenA, address tokenB) private view returns (address pair) {
        pair = AmmFactory(factory).getPair(tokenA, tokenB);
        require(pair != address(0), "AmmRouter: no pool for token pair");
    }
}
